"""Which blocking witnesses the base shares (`shared_failures`), from gate records alone."""

from __future__ import annotations

from witness_gate import shared_failures
from witness_gate.labels import EXIT_BLOCKED, EXIT_INCOMPLETE, EXIT_PASS


def row(file: str, label: str = "regression", **changes) -> dict:
    base = {
        "file": f"witnesses/{file}",
        "assertion_id": "prop_total",
        "witness_hash": "ab" * 32,
        "label": label,
        "failures": 24,
        "runs": 24,
        "cause": "deterministic",
        "reason": "fails on every replay",
        "frozen_by": None,
        "blocks": True,
    }
    return {**base, **changes}


def record(*rows: dict, reasons: tuple[str, ...] = (), exit_code: int = EXIT_BLOCKED) -> dict:
    return {"witnesses": list(rows), "reasons": list(reasons), "exit_code": exit_code}


def test_a_regression_the_base_blocks_the_same_way_is_shared_and_nothing_else_is():
    head = record(
        row("a.json"),
        row("b.json", witness_hash="cd" * 32),
        row("c.json", failures=23),
        row("d.json", label="flake", failures=12),
    )
    base = record(row("a.json"), row("b.json"), row("c.json"), row("d.json", label="flake", failures=12))
    # b: another witness; c: another count; d: a flake (its way out is a freeze, which expires)
    assert [r["file"] for r in shared_failures.shared(head, base)] == ["witnesses/a.json"]


def test_a_row_the_base_does_not_block_is_not_shared():
    assert shared_failures.shared(record(row("a.json")), record(row("a.json", blocks=False))) == []


def test_the_verdict_without_the_shared_rows_and_never_past_anything_else():
    head = record(row("a.json"), row("b.json", label="not_reproduced"))
    assert shared_failures.exit_code_without(head, [head["witnesses"][0]]) == EXIT_INCOMPLETE
    assert shared_failures.exit_code_without(record(row("a.json")), [row("a.json")]) == EXIT_PASS
    blocked_otherwise = record(row("a.json"), reasons=("blocked: props.py: loading the property module failed",))
    assert shared_failures.exit_code_without(blocked_otherwise, [row("a.json")]) == EXIT_BLOCKED


def test_set_aside_rows_no_longer_block_in_what_the_review_shows():
    shown = shared_failures.set_aside(record(row("a.json"), row("b.json")), [row("a.json")])
    assert [(r["file"], r["blocks"]) for r in shown["witnesses"]] == [
        ("witnesses/a.json", False),
        ("witnesses/b.json", True),
    ]
    assert "the base's debt" in shown["witnesses"][0]["next_step"]


def test_the_base_is_asked_only_when_a_regression_blocks():
    assert shared_failures.shareable(record(row("a.json")))
    assert not shared_failures.shareable(record(row("a.json", label="flake", failures=12)))
    assert not shared_failures.shareable(record(row("a.json", blocks=False)))
