"""Adopting witness-gate from another repository, following docs/adopt.md to the letter,
and `pants test` with the gate, for real.

The repository is the guide's (support/adopter.py): a small ledger library whose files are
the guide's file blocks, this build's two wheels in `wheels/`. Its own `./pants` installs
the plugin by version and the runner from its resolve; one pantsd serves the module. Its
`pants test` goes through a
pass (then served from cache), a regression, a flake frozen with the
guide's command (and that freeze expiring with nothing else changed: the gate's clock
moved past it by libfaketime, not waited for), oracle edits under awkward names (a
space, an umlaut, a rename, a line break) and the refusals;
then the guide's CLI path (the runner wheel in a fresh venv) gates the same repository
and reviews a pull request. The pull-request job copied into it is adopt_job_test.py's.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.adopter import ARTIFACTS, Adopter, adopted
from support.flaky import flaky_property_source
from support.expiry import ShiftedClock, expires_at, still_valid
from support.git_repo import Run
from support.guide import BUG, IMPL, commands
from witness_gate import schemas

ORACLE = "tests/properties/ledger_props.py"
FIXTURE = "tests/fixtures/accounts.json"


@pytest.fixture(scope="module")
def adopter(tmp_path_factory) -> Iterator[Adopter]:
    yield from adopted(tmp_path_factory.mktemp("adopt"))


def assert_artifacts_valid(adopter: Adopter) -> None:
    for name, schema in [("fixture.lock", "lock"), ("classification.json", "report"), ("gate.json", "gate")]:
        schemas.validate(schema, adopter.artifact(name), name)
    for row in adopter.artifact("gate.json")["witnesses"]:
        schemas.validate("witness", json.loads((adopter.root / ARTIFACTS / row["file"]).read_text()), row["file"])


def test_pants_test_passes_a_sound_library_and_serves_an_unchanged_rerun_from_cache(adopter):
    adopter.reset()
    [_, test] = commands("pants")
    result = adopter.sh(test)
    assert result.code == 0, result.output
    assert adopter.artifact("gate.json")["verdict"] == "pass"
    assert_artifacts_valid(adopter)
    again = adopter.pants_test()
    assert again.code == 0 and ("(memoized)" in again.output or "(cached locally)" in again.output), again.output


def test_pants_test_blocks_a_regression(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    red = adopter.pants_test()
    assert (
        red.code == 1 and "regression: prop_balance_is_credits_minus_debits failed 60/60 replays" in red.output
    ), red.output
    assert "Block the patch" in red.output
    assert_artifacts_valid(adopter)


@pytest.fixture(scope="module")
def flaky(adopter) -> tuple[Run, str, str]:
    """A branch with a property that fails on some replays: its red run, and the freeze the
    command its flake line prints writes from that run's artifacts (its text and path)."""
    adopter.reset()
    adopter.git("checkout", "-q", "-B", "flaky")
    (adopter.root / "tests/properties/flaky_props.py").write_text(flaky_property_source())
    adopter.commit("a property that fails on some replays")
    red = adopter.pants_test()
    [row] = adopter.artifact("gate.json")["witnesses"]
    # The command the flake's line prints, run as the guide says: through the runner target.
    [printed] = re.findall(
        r"to freeze it, in a pull request of its own that the oracle's owners review: witness-gate (freeze .*)",
        red.output,
    )
    [guide] = commands("freeze")
    filled = (
        guide.replace("<file from the output>", Path(row["file"]).name)
        .replace("<failures>", str(row["failures"]))
        .replace("<runs>", str(row["runs"]))
    )
    assert shlex.split(filled) == [
        "./pants",
        "run",
        ":witness-gate",
        "--",
        *shlex.split(printed),
    ]  # the guide shows what is printed
    written = adopter.sh(f"./pants run :witness-gate -- {printed}")
    assert written.code == 0, written.output
    freeze = f".witness-gate/freezes/{Path(row['file']).name}"
    return red, (adopter.root / freeze).read_text(), freeze


def start_frozen(adopter: Adopter, flaky: tuple[Run, str, str]) -> str:
    """The flaky branch with its freeze in place; returns the freeze's path."""
    adopter.reset("flaky")
    _, text, freeze = flaky
    (adopter.root / freeze).parent.mkdir(parents=True, exist_ok=True)
    (adopter.root / freeze).write_text(text)
    return freeze


def test_a_flake_is_red_until_the_guides_freeze_command_freezes_it_and_red_again_once_it_expires(
    adopter, flaky, tmp_path
):
    red, _, _ = flaky
    assert red.code == 1, red.output
    assert re.search(r"flake: prop_sometimes failed ([1-9]|[12][0-9])/30 replays", red.output), red.output
    assert "it follows the global random state" in red.output and "No valid freeze covers this witness" in red.output
    # The same options on both runs under the freeze (libfaketime in the gate's environment,
    # reading its offset from a file): only the file moves the gate's clock past the guide's
    # 24-hour freeze, and the red run is run, not served from a cache.
    freeze = start_frozen(adopter, flaky)
    clock = ShiftedClock(tmp_path)
    shifted = "--test-extra-env-vars=" + shlex.quote(
        "+" + json.dumps([f"{name}={value}" for name, value in clock.env().items()])
    )
    expiry = expires_at(adopter.root / freeze)
    green = adopter.pants_test(shifted)
    assert green.code == 0 and f"frozen by {freeze}" in green.output, green.output
    assert_artifacts_valid(adopter)
    clock.past(expiry)
    expired = adopter.pants_test(shifted)
    assert expired.code != 0 and f"expired at {expiry:%Y-%m-%dT%H:%M:%SZ}" in expired.output, expired.output
    assert re.search(r"^✕ tests:properties failed in [0-9.]+s\.$", expired.output, re.M), expired.output
    assert still_valid(expiry), "the machine's clock passed the expiry: the red run proves nothing about the shift"


def test_a_fixture_changed_in_the_same_diff_as_a_freeze_is_red(adopter, flaky):
    start_frozen(adopter, flaky)
    adopter.edit(
        FIXTURE, '{"kind": "debit", "amount": 40}', '{"kind": "debit", "amount": 40}, {"kind": "credit", "amount": 1}'
    )
    run = adopter.pants_test()
    assert run.code != 0 and "one patch may not refresh the pin and the silence together" in run.output, run.output


def test_with_the_gate_disabled_any_failure_is_red_and_no_freeze_applies(adopter, flaky):
    start_frozen(adopter, flaky)
    run = adopter.pants_test("--no-witness-gate-enabled")
    assert run.code != 0 and "mode check_only" in run.output, run.output
    assert adopter.artifact("gate.json")["mode"] == "check_only"


def test_editing_the_build_declaration_with_the_implementation_is_a_mixed_edit(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    adopter.edit("tests/BUILD", 'fixture=":accounts",', 'fixture=":accounts",\n    replays=1,')
    run = adopter.pants_test()
    assert (
        run.code != 0 and "mixed_edit: prop_balance_is_credits_minus_debits failed 12/12 replays" in run.output
    ), run.output


def test_code_under_test_that_exits_green_cannot_pass_the_target(adopter):
    # Forged output and the other hostile endings are the runner's tests (hostile_test.py);
    # here, that the target follows the gate's verdict and not the process's status.
    adopter.reset()
    adopter.edit(
        IMPL,
        "    return sum(",
        '    import os\n    if any(e["amount"] > 5000 for e in entries):\n        os._exit(0)\n    return sum(',
    )
    run = adopter.pants_test()
    assert (
        run.code != 0 and "regression: prop_balance_is_credits_minus_debits" in run.output and "crashed" in run.output
    ), run.output
    assert adopter.artifact("gate.json")["verdict"] == "blocked"


def test_skipping_the_gate_is_refused_not_reported_green(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    run = adopter.pants_test("--witness-gate-skip")
    assert run.code != 0 and "the gate has no off switch" in run.output, run.output


def test_the_cli_path_gates_and_reviews_the_same_repository(adopter):
    adopter.reset()
    for command in commands("cli"):
        done = adopter.sh(command)
        assert done.code == 0, (command, done.output)
    assert adopter.sh(".venv/bin/witness-gate --version").output.startswith("witness-gate 0.4.0")

    adopter.git("checkout", "-q", "-B", "patch")
    adopter.edit(IMPL, *BUG)
    adopter.commit("a bug")
    gate = [adopter.sh(command) for command in commands("cli-gate")][-1]
    assert gate.code == 1 and "regression: prop_balance_is_credits_minus_debits" in gate.output, gate.output

    # The suite is declared once, in tests/BUILD: the base's own Pants tells review about it.
    *prepare, review = commands("review")
    for command in prepare:
        done = adopter.sh(command)
        assert done.code == 0, (command, done.output)
    graph = json.loads((adopter.root / ".artifacts/suites.json").read_text())
    schemas.validate("suites", graph, "suites.json")
    assert graph["commit"] == adopter.git("rev-parse", "main") and [s["name"] for s in graph["suites"]] == [
        "tests.properties"
    ]
    reviewed = adopter.sh(review)
    assert reviewed.code == 1, reviewed.output
    assert "suites: tests.properties (declared in the base's build graph" in reviewed.output
    assert "tests.properties: regression: prop_balance_is_credits_minus_debits" in reviewed.output
    without_graph = adopter.sh(review.replace("--suites .artifacts/suites.json ", ""))
    assert without_graph.code == 2 and "tests/BUILD declare gated targets" in without_graph.output, without_graph.output


def extra_properties(name: str) -> str:
    return (
        "from hypothesis import strategies as st\n\nimport witness_gate\nfrom ledger.balance import balance\n\n\n"
        '@witness_gate.property(payloads=st.lists(st.fixed_dictionaries({"kind": st.just("credit"), "amount": '
        "st.integers(0, 9)}), max_size=3))\n"
        f'def prop_{name}(payload: list) -> bool:\n    return balance(payload) == sum(e["amount"] for e in payload)\n'
    )


def oracle_edit(path: str):
    def edit(adopter: Adopter) -> None:
        (adopter.root / path).write_text((adopter.root / path).read_text() + "# reworded\n")

    return edit


# Pants' own git helper split committed names at whitespace, quoted non-ASCII ones and listed
# a rename under its new name only: each of these oracle edits passed as an implementation edit.
@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(oracle_edit("tests/properties/my props.py"), id="space"),
        pytest.param(oracle_edit("tests/properties/örders.py"), id="umlaut"),
        pytest.param(
            lambda adopter: adopter.git("mv", "tests/properties/plain_props.py", "tests/properties/renamed ö props.py"),
            id="rename",
        ),
    ],
)
def test_an_oracle_edit_under_any_name_makes_a_mixed_edit(adopter, edit):
    adopter.reset()
    adopter.git("checkout", "-q", "-B", "names")
    modules = {
        "tests/properties/my props.py": "spaced",
        "tests/properties/örders.py": "umlaut",
        "tests/properties/plain_props.py": "plain",
    }
    for path, name in modules.items():
        (adopter.root / path).write_text(extra_properties(name))
    adopter.commit("property modules under awkward names")
    adopter.git("checkout", "-q", "-B", "edit")
    (adopter.root / IMPL).write_text((adopter.root / IMPL).read_text() + "# reworded\n")  # harmless
    edit(adopter)
    adopter.commit("a harmless implementation edit and an oracle edit")
    run = adopter.pants_test("--witness-gate-base=names")  # the branch's commits since `names`
    assert run.code == 1 and "mixed_edit: the diff changes implementation and oracle paths" in run.output, run.output


def test_a_changed_name_the_list_cannot_carry_fails_the_run(adopter):
    adopter.reset()
    (adopter.root / "tests/properties/notes\nof the oracle.txt").write_text("an oracle edit the list cannot carry\n")
    run = adopter.pants_test()  # base = "HEAD": the untracked file
    assert run.code != 0 and "the changed-file list cannot carry" in run.output, run.output
    assert r"'tests/properties/notes\nof the oracle.txt'" in run.output, run.output
