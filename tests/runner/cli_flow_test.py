"""End to end through the real CLI, one test per user story of the spec."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import Run, SampleRepo, add_flaky_property, copied, copy_example

from witness_gate import schemas

BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
IMPL = "src/orders_app/pricing.py"
ORACLE = "tests/properties/orders_props.py"


def pinned_and_checked(repo: SampleRepo, expect_check: int) -> None:
    pinned = repo.pin()
    assert pinned.code == 0, pinned.stderr
    result = repo.check()
    assert result.code == expect_check, result.stderr


def assert_artifacts_valid(repo: SampleRepo) -> None:
    schemas.validate("lock", json.loads((repo.root / repo.lock).read_text()), "lock")
    for path in repo.witness_files():
        schemas.validate("witness", json.loads(path.read_text()), str(path))
    schemas.validate("report", repo.report_json(), "report")


def test_clean_example_passes_with_no_witnesses(repo):
    pinned_and_checked(repo, 0)
    result = repo.classify()
    assert result.code == 0, result.stdout + result.stderr
    assert repo.witness_files() == []
    assert "verdict: pass" in result.stdout
    assert_artifacts_valid(repo)


@pytest.fixture(scope="module")
def regression_once(tmp_path_factory) -> tuple[SampleRepo, Run]:
    """The deterministic bug checked and classified once for the module, with the classify run."""
    repo = copy_example(tmp_path_factory.mktemp("regression") / "orders")
    repo.edit(IMPL, *BUG)
    pinned_and_checked(repo, 1)
    return repo, repo.classify(IMPL)


@pytest.fixture
def classified_regression(regression_once: tuple[SampleRepo, Run], tmp_path: Path) -> SampleRepo:
    return copied(regression_once[0], tmp_path / "orders")


def test_deterministic_bug_in_src_is_a_regression(regression_once):
    repo, result = regression_once
    [path] = repo.witness_files()
    record = json.loads(path.read_text())
    assert record["payload"] == {"claimed_total": 0, "lines": [{"price": 0, "qty": 4}]}  # Hypothesis' minimal
    assert record["unshrunk"]["payload"] != record["payload"]
    assert path.name == f"prop_order_total_non_negative.{record['witness_hash'][:12]}.json"
    assert result.code == 1
    assert repo.labels() == ["regression"]
    [entry] = repo.report_json()["witnesses"]
    # Five slots in six interpreters, in two rounds (a would-be regression is confirmed): every replay failed.
    assert (entry["failures"], entry["runs"], entry["cause"]) == (60, 60, "deterministic")
    assert "Block the patch" in result.stdout
    assert_artifacts_valid(repo)


def test_check_twice_writes_identical_bytes(classified_regression, regression_once):
    # A second pin and check, in a copy of the module's repository at another path, with the
    # copied witnesses gone first: what is compared is what the second check wrote.
    first = {p.name: p.read_bytes() for p in regression_once[0].witness_files()}
    shutil.rmtree(classified_regression.witnesses)
    (classified_regression.root / classified_regression.lock).unlink()
    pinned_and_checked(classified_regression, 1)
    assert {p.name: p.read_bytes() for p in classified_regression.witness_files()} == first


@pytest.fixture(scope="module")
def flake_once(tmp_path_factory) -> tuple[SampleRepo, Run]:
    """The flaky property checked and classified once for the module, with the classify run."""
    repo = copy_example(tmp_path_factory.mktemp("flake") / "orders")
    add_flaky_property(repo)
    pinned_and_checked(repo, 1)
    return repo, repo.classify(IMPL)


@pytest.fixture
def classified_flake(flake_once: tuple[SampleRepo, Run], tmp_path: Path) -> tuple[SampleRepo, Run]:
    prepared, classified = flake_once
    return copied(prepared, tmp_path / "orders"), classified


def frozen_flake(classified_flake: tuple[SampleRepo, Run]) -> tuple[Path, dict, Run]:
    """The classified flake (its witness file, its report entry and the classify run),
    frozen with the recorded counts into .artifacts/freeze.json."""
    repo, result = classified_flake
    [path] = repo.witness_files()
    assert result.code == 0, result.stdout + result.stderr
    [entry] = repo.report_json()["witnesses"]
    assert entry["label"] == "flake" and 0 < entry["failures"] < entry["runs"], entry
    frozen = repo.cli(
        "freeze",
        "--assertion",
        "prop_sometimes",
        "--lock",
        repo.lock,
        "--witness",
        str(path),
        "--failures",
        str(entry["failures"]),
        "--runs",
        str(entry["runs"]),
        "--expires-in-hours",
        "24",
    )
    assert frozen.code == 0, frozen.stderr
    return path, entry, result


def test_flake_failing_on_some_replays_is_a_flake_and_may_be_frozen(classified_flake):
    repo = classified_flake[0]
    _, entry, result = frozen_flake(classified_flake)
    assert entry["cause"] == "random_seed", entry["reason"]
    assert "random seeds" in result.stdout
    record = json.loads((repo.root / ".artifacts/freeze.json").read_text())
    assert record["witness_hash"] == entry["witness_hash"]
    schemas.validate("freeze", record, "freeze")


def test_freeze_refuses_counts_classify_did_not_record(classified_flake):
    repo = classified_flake[0]
    [path] = repo.witness_files()
    [entry] = repo.report_json()["witnesses"]
    runs = str(entry["runs"])
    for failures, runs, message in [
        (runs, runs, "caller bug"),
        (str(entry["failures"] - 1), runs, "disagree with classify"),
        ("0", runs, "only a flake"),
    ]:
        result = repo.cli(
            "freeze",
            "--assertion",
            "prop_sometimes",
            "--lock",
            repo.lock,
            "--witness",
            str(path),
            "--failures",
            failures,
            "--runs",
            runs,
            "--expires-in-hours",
            "24",
        )
        assert result.code == 2, (failures, result.stdout)
        assert message in result.stderr
        assert not (repo.root / ".artifacts/freeze.json").exists()


def test_freeze_refuses_expiry_beyond_the_maximum_and_another_assertion(classified_flake):
    repo = classified_flake[0]
    [path] = repo.witness_files()
    [entry] = repo.report_json()["witnesses"]
    base = [
        "freeze",
        "--lock",
        repo.lock,
        "--witness",
        str(path),
        "--failures",
        str(entry["failures"]),
        "--runs",
        str(entry["runs"]),
    ]
    assert "between 1 and 168" in repo.cli(*base, "--assertion", "prop_sometimes", "--expires-in-hours", "169").stderr
    assert "between 1 and 168" in repo.cli(*base, "--assertion", "prop_sometimes", "--expires-in-hours", "0").stderr
    assert "not 'prop_other'" in repo.cli(*base, "--assertion", "prop_other", "--expires-in-hours", "1").stderr


def test_regression_cannot_be_frozen(classified_regression):
    repo = classified_regression
    [path] = repo.witness_files()
    result = repo.cli(
        "freeze",
        "--assertion",
        "prop_order_total_non_negative",
        "--lock",
        repo.lock,
        "--witness",
        str(path),
        "--failures",
        "60",
        "--runs",
        "60",
        "--expires-in-hours",
        "24",
    )
    assert result.code == 2
    assert not (repo.root / ".artifacts/freeze.json").exists()


def test_oracle_only_edit_is_an_oracle_defect(repo):
    repo.edit(ORACLE, "if total < 0:", "if total < 0 or len(order['lines']) > 2:")
    pinned_and_checked(repo, 1)
    result = repo.classify(ORACLE)
    assert result.code == 3
    assert set(repo.labels()) == {"oracle_defect"}


def test_edit_to_both_sides_is_mixed_and_blocks_even_without_witnesses(repo):
    pinned_and_checked(repo, 0)
    result = repo.classify(IMPL, ORACLE)
    assert result.code == 1
    assert "mixed_edit" in result.stdout
    repo.edit(IMPL, *BUG)
    assert repo.check().code == 1
    assert repo.classify(IMPL, ORACLE).code == 1
    assert repo.labels() == ["mixed_edit"]


def test_fixed_bug_leaves_a_witness_that_is_not_reproduced(classified_regression):
    repo = classified_regression
    repo.edit(IMPL, BUG[1], BUG[0])
    result = repo.classify(IMPL)
    assert result.code == 4
    [entry] = repo.report_json()["witnesses"]
    assert entry["label"] == "not_reproduced"
    assert entry["replayed"] == "shrunk"  # the unshrunk payload was replayed too and passed


def test_weakened_oracle_is_caught_by_its_reject_payload(repo):
    repo.edit(ORACLE, "    if total < 0:\n        return False\n", "")
    repo.edit(ORACLE, 'return total == order["claimed_total"]', "return True")
    pinned_and_checked(repo, 1)
    [path] = repo.witness_files()
    record = json.loads(path.read_text())
    assert (record["origin"], record["expect"]) == ("reject", "reject")
    assert repo.classify(ORACLE).code == 3


def test_changed_fixture_refuses_check_with_re_pin(repo):
    pinned_and_checked(repo, 0)
    (repo.root / "tests/fixtures/orders.json").write_text("[]\n")
    result = repo.check()
    assert result.code == 2
    assert "re-pin" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_tampered_witness_is_refused(classified_regression):
    repo = classified_regression
    [path] = repo.witness_files()
    record = json.loads(path.read_text())
    record["payload"]["lines"][0]["qty"] = 3  # payload edited, hash kept
    path.write_text(json.dumps(record))
    assert repo.labels() == ["regression"]  # the classify before the edit wrote a report
    result = repo.classify(IMPL)
    assert result.code == 2
    assert "does not match the payload" in result.stderr
    # The refusal leaves no report that could vouch for this run: the earlier one is marked stale in its place.
    stale = json.loads(repo.report.read_text())
    assert list(stale) == ["stale"] and stale["stale"].startswith("classify refused the run"), stale


def test_lock_in_the_diff_blocks(repo):
    pinned_and_checked(repo, 0)
    result = repo.classify(repo.lock)
    assert result.code == 1
    assert "touches the lock" in result.stdout


def test_property_change_missing_from_the_diff_is_unclassified(classified_regression):
    repo = classified_regression
    repo.edit(ORACLE, "def prop_order_total_non_negative", "# reviewed\ndef prop_order_total_non_negative")
    result = repo.classify(IMPL)
    assert result.code == 4
    assert repo.labels() == ["unclassified"]
    assert "incomplete" in repo.report_json()["witnesses"][0]["reason"]


def test_freeze_replays_the_witness_and_refuses_a_report_edited_by_hand(classified_regression):
    repo = classified_regression
    [path] = repo.witness_files()
    report = repo.report_json()
    report["witnesses"][0].update(label="flake", failures=23, runs=30, cause="random_seed")
    report.update(verdict="pass", exit_code=0)
    repo.report.write_text(json.dumps(report))
    result = repo.cli(
        "freeze",
        "--assertion",
        "prop_order_total_non_negative",
        "--lock",
        repo.lock,
        "--witness",
        str(path),
        "--failures",
        "23",
        "--runs",
        "30",
        "--expires-in-hours",
        "24",
    )
    assert result.code == 2, result.stdout + result.stderr
    assert "replaying the witness does not confirm the report" in result.stderr and "regression 60/60" in result.stderr
    assert not (repo.root / ".artifacts/freeze.json").exists()


def test_verify_passes_an_honest_flake_and_its_freeze(classified_flake):
    repo = classified_flake[0]
    path, _, _ = frozen_flake(classified_flake)
    result = repo.cli(
        "verify",
        "--lock",
        repo.lock,
        "--witnesses",
        ".artifacts/witnesses",
        "--diff-paths",
        "changed.txt",
        "--freeze",
        ".artifacts/freeze.json",
    )
    assert result.code == 0, result.stdout + result.stderr
    # Every check ran and held: the replay and the freeze are checked, not skipped.
    checks = [line.split(": ", 2) for line in result.stdout.splitlines()]
    assert [(ok, name) for ok, name, _ in checks] == [
        ("ok", "lock matches fixture"),
        ("ok", "diff is not mixed"),
        ("ok", "lock not in diff"),
        ("ok", f"label {path.name}"),
        ("ok", f"replay {path.name}"),
        ("ok", "freeze freeze.json"),
    ], result.stdout
    assert "replay gave flake" in result.stdout, result.stdout


def test_verify_as_of_a_later_time_shows_the_freeze_expire_without_touching_its_times(classified_flake):
    repo = classified_flake[0]
    frozen_flake(classified_flake)
    freeze = json.loads((repo.root / ".artifacts/freeze.json").read_text())
    expires = datetime.fromisoformat(freeze["expires_at"].replace("Z", "+00:00"))

    def verify_as_of(moment: str) -> Run:
        return repo.cli(
            "verify",
            "--lock",
            repo.lock,
            "--witnesses",
            ".artifacts/witnesses",
            "--diff-paths",
            "changed.txt",
            "--freeze",
            ".artifacts/freeze.json",
            "--as-of",
            moment,
        )

    held = verify_as_of((expires - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert held.code == 0 and "ok: freeze freeze.json" in held.stdout, held.stdout + held.stderr
    later = (expires + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    lapsed = verify_as_of(later)
    assert lapsed.code == 1, lapsed.stdout + lapsed.stderr
    assert (
        f"FAIL: freeze freeze.json: expires at {freeze['expires_at']}, before {later}" in lapsed.stdout
    ), lapsed.stdout
    # Never back in time (an expired freeze cannot be made to hold), and never a time without its zone.
    earlier = verify_as_of("2020-01-01T00:00:00Z")
    assert earlier.code == 2 and "--as-of 2020-01-01T00:00:00Z is before now" in earlier.stderr, earlier.stderr
    zoneless = verify_as_of(later.rstrip("Z"))
    assert zoneless.code == 2 and "is not a time with its zone" in zoneless.stderr, zoneless.stderr
    assert json.loads((repo.root / ".artifacts/freeze.json").read_text()) == freeze


def test_verify_replays_the_witness_and_fails_a_report_edited_by_hand(classified_regression):
    repo = classified_regression
    report = repo.report_json()
    report["witnesses"][0].update(label="flake", failures=23, runs=30, cause="random_seed")
    repo.report.write_text(json.dumps(report))
    result = repo.cli(
        "verify", "--lock", repo.lock, "--witnesses", ".artifacts/witnesses", "--diff-paths", "changed.txt"
    )
    assert result.code == 1, result.stdout + result.stderr
    # The label table alone would accept 23/30 as a flake; the replay does not.
    assert "FAIL: replay" in result.stdout and "replay gave regression 60/60" in result.stdout, result.stdout


def test_verify_replays_with_the_reports_import_paths_and_says_when_they_load_nothing(classified_regression):
    # The report records where the code under test was importable from; verify replays
    # with that, not this checkout's pyproject.toml, and a replay that loads nothing is named.
    repo = classified_regression
    repo.edit("pyproject.toml", 'import-paths = ["src"]\n', 'import-paths = ["tests"]\n')
    honest = repo.cli(
        "verify", "--lock", repo.lock, "--witnesses", ".artifacts/witnesses", "--diff-paths", "changed.txt"
    )
    assert honest.code == 0, honest.stdout + honest.stderr
    report = repo.report_json()
    repo.report.write_text(json.dumps({**report, "import_paths": ["tests"]}))
    moved = repo.cli(
        "verify", "--lock", repo.lock, "--witnesses", ".artifacts/witnesses", "--diff-paths", "changed.txt"
    )
    assert moved.code == 1 and "could not load the property module" in moved.stdout, moved.stdout + moved.stderr
    assert "Traceback" not in moved.stderr
