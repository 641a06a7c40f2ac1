"""Failures the base shares: a blocking witness that the base's own implementation fails
the same way is the base's debt, not the patch's regression.

`review` replays each suite's blocking witnesses on the base's implementation (the base's
tree from git, the same lock: pin, conditions, schedule and salt) and compares row by row.
"The same way" is everything the gate says of a witness: its assertion, its bytes (hash),
label (a regression: a flake's way out is a freeze, which expires), replay counts, cause
and evidence text. A patch that changes any of it on such a
witness (another failure, another label, a different count) is judged as always; a row the
base does not block, or does not have, stays the patch's. Pure: gate records in, rows out.

What it leaves open, said with every such row: the search of that property stops at the
shared failure on the base as on the head, so nothing past it is searched until the base
fixes it.
"""

from __future__ import annotations

from typing import Any, cast

from witness_gate.labels import gate_exit_code

_SAME_WAY = ("assertion_id", "witness_hash", "label", "failures", "runs", "cause", "reason")
# A deterministic failure only. A flake the base shares stays the patch's to answer for: its
# way out is a freeze, which expires, and a flake set aside would outlive every expiry. An
# incomplete label (not reproduced, unclassified) stays incomplete whoever shares it.
_SHAREABLE = ("regression",)


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[field] for field in _SAME_WAY)


def shareable(head: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the base could share, of all that block the head: its blocking regressions."""
    return [row for row in head["witnesses"] if row["blocks"] and row["label"] in _SHAREABLE]


def shared(head: dict[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
    """The head's blocking rows that the base's run of the same witnesses blocks the same way."""
    blocking_on_base = {_key(row) for row in base.get("witnesses", []) if row["blocks"]}
    return [
        row
        for row in head["witnesses"]
        if row["blocks"] and row["label"] in _SHAREABLE and _key(row) in blocking_on_base
    ]


def exit_code_without(record: dict[str, Any], rows: list[dict[str, Any]]) -> int:
    """The suite's status with `rows` set aside; unchanged when anything but witnesses
    blocks it (a property that failed to load, a test not searched, the diff)."""
    if record["reasons"] or not rows:
        return cast(int, record["exit_code"])
    aside = {row["file"] for row in rows}
    return gate_exit_code(
        ((row["label"], row["frozen_by"] is not None) for row in record["witnesses"] if row["file"] not in aside), False
    )


def set_aside(record: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The record as the review shows it (its lines, SARIF, JUnit, summary): `rows` no longer
    block, and say why. The suite's own gate.json keeps the gate's word."""
    aside = {row["file"] for row in rows}
    return {
        **record,
        "witnesses": [
            {
                **row,
                "blocks": False,
                "next_step": "The base fails this witness the same way: the base's debt, not "
                "this patch's regression (pre-existing, below).",
            }
            if row["file"] in aside
            else row
            for row in record["witnesses"]
        ],
    }


def lines(rows: list[dict[str, Any]]) -> list[str]:
    """What the review says of each shared row."""
    return [
        f"pre-existing: {row['assertion_id']} ({row['label']}, {row['failures']}/{row['runs']} replays; "
        f"{row['file']}): the base fails "
        "this witness the same way, so it is not this patch's regression. The base's debt: fix it (then retain the "
        "witness in "
        "the corpus); until then this property is searched no further than this failure."
        for row in rows
    ]
