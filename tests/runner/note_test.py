"""The review note: rendered from a real gate run's artifacts, and drafted notes checked
against them (the spec: read the note when it quotes the witness file, discard it when it
disagrees with that file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SampleRepo, copied, copy_example
from gate_test import BUG, IMPL

ASSERTION = "prop_order_total_non_negative"


@pytest.fixture(scope="module")
def red_once(tmp_path_factory) -> SampleRepo:
    """One red gate run for the module: the notes below are checked against its artifacts."""
    repo = copy_example(tmp_path_factory.mktemp("red") / "orders")
    repo.edit(IMPL, *BUG)
    assert repo.gate(IMPL).code == 1
    return repo


@pytest.fixture
def red(red_once: SampleRepo, tmp_path: Path) -> SampleRepo:
    return copied(red_once, tmp_path / "orders")


def row_and_witness(repo: SampleRepo) -> tuple[dict, dict]:
    [row] = repo.gate_json()["witnesses"]
    return row, json.loads((repo.root / ".artifacts/gate" / row["file"]).read_text())


def check(repo: SampleRepo, text: str):
    (repo.root / "NOTE.md").write_text(text)
    return repo.cli("note", "--out", ".artifacts/gate", "--check", "NOTE.md")


def test_the_rendered_note_quotes_the_witness_and_agrees_with_it(red: SampleRepo):
    rendered = red.cli("note", "--out", ".artifacts/gate")
    assert rendered.code == 0, rendered.stderr
    row, witness = row_and_witness(red)
    assert (
        f"- {ASSERTION}: regression, {row['failures']}/{row['runs']} replays failed (cause: deterministic); blocks"
        in rendered.stdout
    )
    [block] = rendered.stdout.split("```json\n")[1:]
    quoted = json.loads(block.split("```")[0])
    assert (quoted["witness_hash"], quoted["payload"], quoted["label"]) == (
        witness["witness_hash"],
        witness["payload"],
        "regression",
    )
    checked = check(red, rendered.stdout)
    assert checked.code == 0 and "note: agrees with .artifacts/gate" in checked.stdout, checked.stdout


def forge(text: str, row: dict, witness: dict) -> str:
    return (
        text.replace("{hash}", witness["witness_hash"])
        .replace("{runs}", str(row["runs"]))
        .replace("{failures}", str(row["failures"]))
    )


@pytest.mark.parametrize(
    "draft, disagreement",
    [
        (
            f"{ASSERTION} is a flake ({{failures}}/{{runs}}), witness {{hash}}: freeze it.\n",
            f"says {ASSERTION} is flake; the gate labelled it regression",
        ),
        (f"{ASSERTION}: regression, 3/{{runs}} replays failed; witness {{hash}}\n", f"says {ASSERTION} failed 3/"),
        (f"witness {'0' * 64} of {ASSERTION}\n", "neither a witness hash of these artifacts nor the fixture's digest"),
        (
            '```json\n{"witness_hash": "{hash}", "payload": {"claimed_total": 0, "lines": []}}\n```\n',
            "JSON block 1: payload is",
        ),
        (
            '```json\n{"witness_hash": "{hash}", "label": "flake"}\n```\n',
            'JSON block 1: label is "flake"; the witness file has "regression"',
        ),
        (f"{ASSERTION} failed, probably a flake; re-run it.\n", "quotes no witness of these artifacts"),
    ],
    ids=["label", "counts", "unknown hash", "payload", "quoted label", "quotes nothing"],
)
def test_a_drafted_note_that_disagrees_with_the_artifacts_is_refused_naming_why(
    red: SampleRepo, draft: str, disagreement: str
):
    row, witness = row_and_witness(red)
    checked = check(red, forge(draft, row, witness))
    assert checked.code == 1, checked.stdout + checked.stderr
    assert disagreement in checked.stdout and "discard it" in checked.stdout, checked.stdout


def test_an_honest_short_note_agrees(red: SampleRepo):
    row, witness = row_and_witness(red)
    honest = forge(
        f"The gate blocked {ASSERTION}: regression, {{failures}}/{{runs}} replays failed. Witness {{hash}}.\n",
        row,
        witness,
    )
    assert check(red, honest).code == 0
