"""The gate end to end through the real CLI: freezes honoured only when they hold."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import Run, SampleRepo, add_flaky_property, copied, copy_example

from support.flaky import flaky_property_source
from witness_gate import gate as gates
from witness_gate import schemas
from witness_gate.labels import UNREPEATABLE_FLAKE

IMPL = "src/orders_app/pricing.py"
FIXTURE = "tests/fixtures/orders.json"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
GATE_OUT = ".artifacts/gate"


@pytest.fixture(scope="module")
def flake_gated_once(tmp_path_factory) -> tuple[SampleRepo, Run]:
    """The flaky property through the gate once for the module, with the (red) gate run."""
    repo = copy_example(tmp_path_factory.mktemp("flake") / "orders")
    add_flaky_property(repo)
    return repo, repo.gate(IMPL)


@pytest.fixture
def flake_gated(flake_gated_once: tuple[SampleRepo, Run], tmp_path: Path) -> tuple[SampleRepo, Run]:
    prepared, red = flake_gated_once
    return copied(prepared, tmp_path / "orders"), red


def freeze_flake(repo: SampleRepo, out: str = ".witness-gate/freezes/flake.json", hours: str = "24") -> dict:
    [row] = repo.gate_json()["witnesses"]
    result = repo.cli(
        "freeze",
        "--assertion",
        row["assertion_id"],
        "--lock",
        f"{GATE_OUT}/fixture.lock",
        "--witness",
        f"{GATE_OUT}/{row['file']}",
        "--report",
        f"{GATE_OUT}/classification.json",
        "--failures",
        str(row["failures"]),
        "--runs",
        str(row["runs"]),
        "--expires-in-hours",
        hours,
        "--out",
        out,
    )
    assert result.code == 0, result.stderr
    return json.loads((repo.root / out).read_text())


def rewrite_freeze(repo: SampleRepo, name: str, **fields) -> None:
    path = repo.root / ".witness-gate/freezes" / name
    record = {**json.loads(path.read_text()), **fields}
    path.write_text(json.dumps(record))


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def stale(repo: SampleRepo, name: str) -> bool:
    """True when an earlier run's artifact in the gate's output holds only the stale record."""
    return list(json.loads((repo.root / GATE_OUT / name).read_text())) == ["stale"]


def assert_gate_artifacts_valid(repo: SampleRepo) -> None:
    out = repo.root / GATE_OUT
    schemas.validate("gate", json.loads((out / "gate.json").read_text()), "gate.json")
    schemas.validate("lock", json.loads((out / "fixture.lock").read_text()), "fixture.lock")
    if (out / "classification.json").exists() and not stale(repo, "classification.json"):  # --check-only writes none
        schemas.validate("report", json.loads((out / "classification.json").read_text()), "classification.json")


def test_clean_example_passes_the_gate(repo):
    result = repo.gate()
    assert result.code == 0, result.stdout + result.stderr
    assert repo.gate_json()["verdict"] == "pass"
    assert_gate_artifacts_valid(repo)


def test_unfrozen_flake_blocks_and_a_valid_freeze_lets_it_pass(flake_gated):
    repo, red = flake_gated
    assert red.code == 1, red.stdout + red.stderr
    assert "No valid freeze covers this witness" in red.stdout
    frozen = freeze_flake(repo)
    green = repo.gate(IMPL)
    assert green.code == 0, green.stdout + green.stderr
    [row] = repo.gate_json()["witnesses"]
    assert (row["label"], row["frozen_by"], row["blocks"]) == ("flake", ".witness-gate/freezes/flake.json", False)
    assert row["witness_hash"] == frozen["witness_hash"]
    assert_gate_artifacts_valid(repo)


def test_the_flake_line_prints_the_freeze_command_that_lets_it_pass(flake_gated):
    import shlex

    repo, red = flake_gated
    assert red.code == 1, red.stdout + red.stderr
    [row] = repo.gate_json()["witnesses"]
    said = [line for line in red.stdout.splitlines() if line.startswith("  to freeze it, in a pull request of its own")]
    assert len(said) == 1, red.stdout
    command = shlex.split(said[0].split(": ", 1)[1])
    assert command[:2] == ["witness-gate", "freeze"]
    assert command[command.index("--failures") + 1 : command.index("--failures") + 4 : 2] == [
        str(row["failures"]),
        str(row["runs"]),
    ]
    assert command[command.index("--witness") + 1] == f"{GATE_OUT}/{row['file']}"
    wrote = repo.cli(*command[1:])  # word for word, from the repository root
    assert wrote.code == 0, wrote.stdout + wrote.stderr
    green = repo.gate(IMPL)
    assert green.code == 0, green.stdout + green.stderr
    assert "to freeze it" not in green.stdout


def test_freeze_that_does_not_hold_keeps_the_flake_red(flake_gated):
    repo = flake_gated[0]
    freeze_flake(repo)
    now = datetime.now(timezone.utc)
    cases = {
        "expired": (
            {"created_at": stamp(now - timedelta(hours=2)), "expires_at": stamp(now - timedelta(minutes=1))},
            "expired at",
        ),
        "too-long": ({"expires_at": stamp(now + timedelta(days=400))}, "168-hour maximum"),
        "future": (
            {"created_at": stamp(now + timedelta(hours=1)), "expires_at": stamp(now + timedelta(hours=2))},
            "created in the future",
        ),
        "other-fixture": ({"fixture_digest": "0" * 64}, "another fixture digest"),
    }
    # Each broken copy beside the others, in one gate: the gate judges every freeze that names
    # the witness on its own and prints each one's problem on its own line, and any copy that
    # held would set frozen_by.
    original = (repo.root / ".witness-gate/freezes/flake.json").read_text()
    (repo.root / ".witness-gate/freezes/flake.json").unlink()
    for name, (fields, _) in cases.items():
        (repo.root / f".witness-gate/freezes/{name}.json").write_text(original)
        rewrite_freeze(repo, f"{name}.json", **fields)
    result = repo.gate(IMPL)
    assert result.code == 1, (result.stdout, result.stderr)
    for name, (_, problem) in cases.items():
        [line] = [line for line in result.stdout.splitlines() if f"/{name}.json does not hold: " in line]
        assert problem in line, (name, result.stdout)
    assert repo.gate_json()["witnesses"][0]["frozen_by"] is None


def test_freeze_for_another_witness_hash_does_not_apply(flake_gated):
    repo = flake_gated[0]
    freeze_flake(repo)
    rewrite_freeze(repo, "flake.json", witness_hash="f" * 64)
    result = repo.gate(IMPL)
    assert result.code == 1
    assert repo.gate_json()["freezes"] == []


def test_regression_blocks_with_label_witness_counts_and_next_step_and_no_freeze_lets_it_pass(repo):
    repo.edit(IMPL, *BUG)
    first = repo.gate(IMPL)
    assert first.code == 1
    [row] = repo.gate_json()["witnesses"]
    assert (row["label"], row["failures"], row["runs"], row["blocks"]) == ("regression", 60, 60, True)
    assert (
        f"regression: prop_order_total_non_negative failed 60/60 replays; witness {row['file']} - Block the patch"
        in first.stdout
    )
    assert_gate_artifacts_valid(repo)
    now = datetime.now(timezone.utc)
    repo.write(
        ".witness-gate/freezes/forged.json",
        json.dumps(
            {
                "schema_version": 1,
                "assertion_id": row["assertion_id"],
                "witness_hash": row["witness_hash"],
                "fixture_digest": repo.gate_json()["fixture_digest"],
                "failures": 2,
                "runs": 5,
                "created_at": stamp(now),
                "expires_at": stamp(now + timedelta(hours=1)),
            }
        ),
    )
    result = repo.gate(IMPL)
    assert result.code == 1
    assert "labelled regression, not flake" in result.stdout


def test_fixture_and_freeze_in_one_diff_block(flake_gated):
    repo = flake_gated[0]
    freeze_flake(repo)
    result = repo.gate(FIXTURE, ".witness-gate/freezes/flake.json")
    assert result.code == 1
    assert "refresh the pin and the silence together" in result.stdout


def test_mixed_diff_blocks_even_when_every_property_passes(repo):
    result = repo.gate(IMPL, "tests/properties/orders_props.py")
    assert result.code == 1
    assert repo.gate_json()["witnesses"] == []
    assert "mixed_edit" in result.stdout


def test_check_only_mode_fails_on_any_witness_and_ignores_freezes(flake_gated):
    repo = flake_gated[0]
    freeze_flake(repo)
    result = repo.cli(
        "gate",
        "--fixture",
        FIXTURE,
        "--generator-version",
        "3",
        "--properties",
        "tests/properties",
        "--out",
        GATE_OUT,
        "--check-only",
    )
    assert result.code == 1, result.stdout + result.stderr
    record = repo.gate_json()
    assert record["mode"] == "check_only" and record["witnesses"][0]["blocks"]
    assert stale(repo, "classification.json")  # the earlier run's report vouches for nothing
    assert_gate_artifacts_valid(repo)


def test_explicit_ownership_lists_replace_the_prefixes(repo):
    repo.write("impl.txt", f"{IMPL}\n")
    repo.write("oracle.txt", "tests/properties/orders_props.py\n")
    repo.edit(IMPL, *BUG)
    result = repo.gate(
        "tests/properties/orders_props.py", extra=("--impl-paths", "impl.txt", "--oracle-paths", "oracle.txt")
    )
    assert result.code == 3, result.stdout + result.stderr
    assert [row["label"] for row in repo.gate_json()["witnesses"]] == ["oracle_defect"]
    repo.write("oracle.txt", f"{IMPL}\n")
    refused = repo.gate(IMPL, extra=("--impl-paths", "impl.txt", "--oracle-paths", "oracle.txt"))
    assert refused.code == 2
    assert "listed as implementation" in refused.stderr
    assert stale(repo, "gate.json")


def test_a_malformed_freeze_is_a_clear_error_and_leaves_no_verdict(repo):
    repo.gate()
    repo.write(".witness-gate/freezes/bad.json", '{"schema_version": 1}')
    result = repo.gate()
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "bad.json" in result.stderr
    assert stale(repo, "gate.json")


def test_ownership_lists_go_together(repo):
    repo.write("impl.txt", f"{IMPL}\n")
    result = repo.gate(IMPL, extra=("--impl-paths", "impl.txt"))
    assert result.code == 2
    assert result.stderr.strip() == "witness-gate: error: --impl-paths and --oracle-paths go together"
    assert not (repo.root / GATE_OUT).exists()


def test_the_gate_refuses_to_classify_without_a_changed_file_list(repo):
    result = repo.cli(
        "gate", "--fixture", FIXTURE, "--generator-version", "3", "--properties", "tests/properties", "--out", GATE_OUT
    )
    assert result.code == 2
    assert "needs --diff-paths" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (repo.root / GATE_OUT).exists()


def test_a_freeze_directory_that_is_a_file_is_refused(repo):
    repo.write("freezes", "not a directory")
    result = repo.gate(extra=("--freezes", "freezes"))
    assert result.code == 2
    assert "freezes: freeze directory is not a plain directory" in result.stderr
    assert not (repo.root / GATE_OUT).exists()


def test_a_freeze_replays_with_the_import_paths_the_gate_used_and_says_when_they_load_nothing(repo):
    # Under `pants test` the gate gets the source roots as --import-path and no pyproject.toml
    # says them: `freeze` must replay with what the report recorded, not the default ".".
    repo.edit("pyproject.toml", 'import-paths = ["src"]\n', "")
    repo.write(
        "tests/properties/flaky_props.py",
        "import orders_app.pricing  # the code under test, from src/\n" + flaky_property_source(),
    )
    red = repo.gate(IMPL, extra=("--import-path", "src"))
    assert red.code == 1 and "No valid freeze covers this witness" in red.stdout, red.stdout + red.stderr
    report_path = repo.root / GATE_OUT / "classification.json"
    report = json.loads(report_path.read_text())
    assert report["import_paths"] == ["src"]
    [row] = repo.gate_json()["witnesses"]
    freeze_flake(repo)
    assert repo.gate(IMPL, extra=("--import-path", "src")).code == 0

    # A report that recorded an import path the module's imports are not under: nothing can be
    # replayed, and freeze says why instead of counting phantom failures (or crashing).
    report_path.write_text(json.dumps({**report, "import_paths": ["tests"]}))
    refused = repo.cli(
        "freeze",
        "--assertion",
        row["assertion_id"],
        "--lock",
        f"{GATE_OUT}/fixture.lock",
        "--witness",
        f"{GATE_OUT}/{row['file']}",
        "--report",
        str(report_path),
        "--failures",
        str(row["failures"]),
        "--runs",
        str(row["runs"]),
        "--expires-in-hours",
        "24",
    )
    assert (
        refused.code == 2
        and "could not load the property module" in refused.stderr
        and "Traceback" not in refused.stderr
    ), refused.stderr


@pytest.mark.parametrize("cause, holds", [("random_seed", True), ("time", False), ("none_found", False)])
def test_an_unfrozen_flakes_gate_row_says_whether_a_freeze_can_hold(cause: str, holds: bool):
    entry = {
        "file": "prop_x.0123456789ab.json",
        "assertion_id": "prop_x",
        "witness_hash": "0" * 64,
        "label": "flake",
        "failures": 3,
        "runs": 30,
        "cause": cause,
        "reason": "",
        "input": "{}",
        "unshrunk_input": None,
        "next_step": "",
    }
    row = gates._row(entry, None)
    assert row["next_step"].startswith("No valid freeze covers this witness")
    assert (UNREPEATABLE_FLAKE in row["next_step"]) is not holds


def test_two_properties_failing_on_one_payload_are_two_witnesses(repo):
    # Deduplicated by payload alone, the second property's failure was dropped: freezing the
    # first (a flake) then passed a run in which the second failed on every call.
    repo.write(
        "tests/properties/zero_props.py",
        (
            "from hypothesis import strategies as st\n\nimport witness_gate\n\n\n"
            "@witness_gate.property(payloads=st.just(0))\ndef prop_a_rejects_zero(n: int) -> bool:\n    return n != "
            "0\n\n\n"
            "@witness_gate.property(payloads=st.just(0))\ndef prop_b_rejects_zero(n: int) -> bool:\n    return n != 0\n"
        ),
    )
    result = repo.gate(IMPL, extra=("--replays", "2"))
    assert result.code == 1, result.stdout + result.stderr
    assert sorted(row["assertion_id"] for row in repo.gate_json()["witnesses"]) == [
        "prop_a_rejects_zero",
        "prop_b_rejects_zero",
    ]


def test_each_flake_gets_its_own_freeze_command_when_two_share_a_payload():
    from pathlib import Path

    shared = "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9"
    rows = [
        {
            "file": f"witnesses/{name}.{shared[:12]}.json",
            "assertion_id": name,
            "witness_hash": shared,
            "label": label,
            "blocks": True,
            "failures": failures,
            "runs": 30,
        }
        for name, label, failures in [("prop_a", "flake", 9), ("prop_b", "flake", 4), ("prop_c", "regression", 30)]
    ]
    commands = gates.freeze_commands({"witnesses": rows}, Path("out"), ".witness-gate/freezes", 168)
    assert set(commands) == {rows[0]["file"], rows[1]["file"]}
    assert "--assertion prop_a" in commands[rows[0]["file"]] and "--failures 9" in commands[rows[0]["file"]]
    assert "--assertion prop_b" in commands[rows[1]["file"]] and "--failures 4" in commands[rows[1]["file"]]


FIXTURE_PROPERTY = """
from hypothesis import strategies as st

import witness_gate
from orders_app.pricing import order_total


@witness_gate.property(payloads=st.fixed_dictionaries({"copies": st.integers(1, 3)}))
def prop_fixture_orders_keep_their_claimed_totals(payload, fixture):
    return all(order_total(order) * payload["copies"] == order["claimed_total"] * payload["copies"] for order in fixture)
"""  # noqa: E501 (test data: a source file, as written)


def test_a_property_that_takes_the_fixture_is_replayed_with_the_fixture(repo):
    # Every replay variant (alone, after its history, in one process) hands it the parsed fixture.
    repo.write("tests/properties/fixture_props.py", FIXTURE_PROPERTY)
    repo.edit(
        IMPL, 'return line["qty"] * line["price"]', 'return line["qty"] * line["price"] + (1 if line["qty"] > 1 else 0)'
    )
    result = repo.gate(IMPL)
    assert result.code == 1, result.stdout + result.stderr
    rows = {row["assertion_id"]: row for row in repo.gate_json()["witnesses"]}
    row = rows["prop_fixture_orders_keep_their_claimed_totals"]
    assert (row["label"], row["failures"]) == ("regression", row["runs"]), row
    assert "first failure: returned_false: property returned False" in row["reason"], row["reason"]
