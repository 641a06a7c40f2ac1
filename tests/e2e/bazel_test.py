"""`bazel test` with the gate, for real: Debian's Bazel on a temporary git repository.

The repository is this project's Bazel files (WORKSPACE, .bazelrc, the root BUILD.bazel,
bazel/) and the orders example with its BUILD.bazel, plus the runner PEX this test's target
builds (`runtime_package_dependencies`) at the path the root package declares. One Bazel
server (its output root under a temporary directory) goes through a clean pass, a cached
re-run, a regression, a mixed edit, a flake under a valid freeze and that freeze expiring
with nothing else changed (the gate's clock moved past it by libfaketime, not waited for),
and the refusals; each run's artifacts come out of `outputs.zip` and are checked against
the schemas.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.bazel import SOURCE, host_env, require_bazel, short_work_dir
from support.flaky import FLAKY_ASSERTION, flaky_property_source
from support.expiry import ShiftedClock, expires_at, still_valid
from support.git_repo import GitRepo, Run
from witness_gate import schemas

TARGET = "//examples/orders:properties"
TESTLOGS = Path("bazel-testlogs/examples/orders/properties")
IMPL = "examples/orders/src/orders_app/pricing.py"
ORACLE = "examples/orders/tests/properties/orders_props.py"
FREEZE = "examples/orders/.witness-gate/freezes/prop_sometimes.json"
CHANGED = ".witness-gate/changed.txt"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 40 else 0)')
PROJECT_FILES = ["WORKSPACE", ".bazelrc", ".bazelignore", "BUILD.bazel", "bazel", "examples/orders"]


class BazelRepo(GitRepo):
    def __init__(self, root: Path, output_root: Path) -> None:
        super().__init__(root)
        self.output_root = output_root

    def bazel(self, *args: str, timeout: int = 600) -> Run:
        done = subprocess.run(
            ["bazel", f"--output_user_root={self.output_root}", *args],
            cwd=self.root,
            env=host_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def gate(self, *options: str) -> Run:
        """What CI runs: the changed-file list against HEAD, then `bazel test` reading it."""
        listed = subprocess.run(
            ["bazel/changed-files.sh", "HEAD"], cwd=self.root, capture_output=True, text=True, check=True
        )
        (self.root / CHANGED).parent.mkdir(exist_ok=True)
        (self.root / CHANGED).write_text(listed.stdout)
        return self.bazel("test", "--test_output=all", f"--//bazel:changed_files=//:{CHANGED}", *options, TARGET)

    def runner(self, *args: str) -> Run:
        """The runner PEX the tests run, outside Bazel (freeze, review), on the same interpreter."""
        python = subprocess.run(
            ["python3.11", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
        ).stdout.strip()
        done = subprocess.run(
            [python, str(self.root / "dist/runner/witness-gate.pex"), *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={**host_env(), "PEX_ROOT": str(self.output_root.parent / "pex")},
            timeout=600,
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def reset(self) -> None:
        self.git("checkout", "-q", "-f", "main")
        self.git("clean", "-fdq")

    def artifacts(self) -> Path:
        """This run's undeclared outputs, extracted from outputs.zip."""
        extracted = Path(tempfile.mkdtemp(dir=self.output_root.parent))
        with zipfile.ZipFile(self.root / TESTLOGS / "test.outputs/outputs.zip") as archive:
            archive.extractall(extracted)
        return extracted


@pytest.fixture(scope="module")
def repo() -> Iterator[BazelRepo]:
    require_bazel()
    work = short_work_dir()
    root = work / "repo"
    for name in PROJECT_FILES:
        if (SOURCE / name).is_dir():
            shutil.copytree(
                SOURCE / name, root / name, ignore=shutil.ignore_patterns("BUILD", "__pycache__", ".artifacts")
            )
        else:
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy2(SOURCE / name, root / name)
    [pex] = Path.cwd().glob("runner/witness-gate.pex")  # this test's runtime package
    (root / "dist/runner").mkdir(parents=True)
    shutil.copy2(pex, root / "dist/runner/witness-gate.pex")
    (root / ".gitignore").write_text("/bazel-*\n/dist/\n/.witness-gate/changed.txt\n")
    repo = BazelRepo(root, work / "out")
    repo.git("init", "-q", "-b", "main")
    repo.commit("the orders example, gated by bazel test")
    try:
        yield repo
    finally:
        repo.bazel("shutdown")
        shutil.rmtree(work, ignore_errors=True)


def assert_artifacts_valid(artifacts: Path) -> dict:
    for name, schema in [("fixture.lock", "lock"), ("classification.json", "report"), ("gate.json", "gate")]:
        schemas.validate(schema, json.loads((artifacts / name).read_text()), name)
    gate = json.loads((artifacts / "gate.json").read_text())
    for row in gate["witnesses"]:
        schemas.validate("witness", json.loads((artifacts / row["file"]).read_text()), row["file"])
    return gate


def test_a_clean_pass_writes_valid_artifacts_and_an_unchanged_rerun_is_cached(repo):
    repo.reset()
    run = repo.gate()
    assert (
        run.code == 0 and "gate: pass" in run.output and f"{TARGET} " in run.output and "PASSED" in run.output
    ), run.output
    artifacts = repo.artifacts()
    assert assert_artifacts_valid(artifacts)["verdict"] == "pass"
    # The JUnit the runner wrote is the one Bazel's reporters read, and a copy is an artifact.
    junit = (repo.root / TESTLOGS / "test.xml").read_text()
    assert "<testsuite" in junit and TARGET in junit and junit == (artifacts / "junit.xml").read_text()
    again = repo.gate()
    assert again.code == 0 and "(cached) PASSED" in again.output, again.output


def test_a_regression_fails_the_test_its_retained_witness_holds_after_the_fix_and_a_mixed_edit_fails(repo):
    repo.reset()
    repo.edit(IMPL, *BUG)
    red = repo.gate()
    assert (
        red.code == 3 and "regression: prop_order_total_non_negative failed" in red.output and "FAILED" in red.output
    ), red.output
    gate = assert_artifacts_valid(repo.artifacts())
    assert gate["verdict"] == "blocked" and gate["witnesses"]

    # Retained from the artifacts `bazel test` wrote (Bazel never caches a failing test, so
    # every red run below is a search of its own).
    [row] = gate["witnesses"]
    corpus = repo.root / "examples/orders/.witness-gate/corpus"
    retained = repo.runner("retain", "--witness", str(repo.artifacts() / row["file"]), "--corpus", str(corpus))
    assert retained.code == 0, retained.output
    repo.edit(IMPL, BUG[1], BUG[0])  # the fix, with the input that failed kept
    fixed = repo.gate()
    assert (
        fixed.code == 0
        and f"corpus: 1 retained witness(es) replayed and held: {Path(row['file']).name}" in fixed.output
    ), fixed.output
    repo.edit(IMPL, *BUG)  # the bug back: the retained input fails again
    again = repo.gate()
    assert (
        again.code == 3 and f"this input failed before (corpus entry {Path(row['file']).name})" in again.output
    ), again.output

    repo.edit(ORACLE, '"""The oracle:', '"""The oracle (reworded):')
    mixed = repo.gate()
    assert mixed.code == 3 and "mixed_edit: prop_order_total_non_negative" in mixed.output, mixed.output


GIVEN_TESTS = """from hypothesis import given, strategies as st

from orders_app.pricing import order_total


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 1000)), max_size=5))
def test_an_order_never_totals_below_zero(lines):
    assert order_total({"lines": [{"qty": qty, "price": price} for qty, price in lines]}) >= 0
"""


def test_a_module_of_given_tests_is_gated_by_bazel_test_as_it_is(repo):
    # Nothing in it imports witness_gate: the target's glob takes it, and pytest runs it in the worker.
    repo.reset()
    (repo.root / "examples/orders/tests/properties/test_orders_given.py").write_text(GIVEN_TESTS)
    repo.commit("the team's own @given test, beside the properties")
    try:
        green = repo.gate()
        assert green.code == 0 and "gate: pass" in green.output, green.output
        repo.edit(IMPL, *BUG)
        red = repo.gate()
        assert (
            red.code == 3 and "test_orders_given.py::test_an_order_never_totals_below_zero failed" in red.output
        ), red.output
        assert (
            "failing input: Failing test case: test_an_order_never_totals_below_zero( lines=[(41, 0)], )" in red.output
        ), red.output
        gate = assert_artifacts_valid(repo.artifacts())
        assert {row["label"] for row in gate["witnesses"]} == {"regression"}
    finally:  # the later tests start from the example as it was
        repo.git("checkout", "-q", "-f", "main")
        repo.git("reset", "-q", "--hard", "HEAD~1")


def test_editing_the_build_declaration_with_the_implementation_is_a_mixed_edit(repo):
    # The BUILD.bazel that declares the test is one of its oracle paths, as under Pants.
    repo.reset()
    repo.edit(IMPL, *BUG)
    repo.edit(
        "examples/orders/BUILD.bazel", 'fixture = ":orders-fixture",', 'fixture = ":orders-fixture",\n    replays = 1,'
    )
    run = repo.gate()
    assert run.code == 3 and "mixed_edit: prop_order_total_non_negative" in run.output, run.output


@pytest.fixture(scope="module")
def flaky_freeze(repo) -> str:
    """main gains a property that fails on some replays; its red run, then the freeze the
    runner writes from that run's artifacts (its text)."""
    repo.reset()
    (repo.root / "examples/orders/tests/properties/flaky_props.py").write_text(flaky_property_source())
    repo.commit("a property that fails on some replays")
    red = repo.gate()
    assert (
        red.code == 3
        and f"flake: {FLAKY_ASSERTION} failed" in red.output
        and "No valid freeze covers this witness" in red.output
    ), red.output
    artifacts = repo.artifacts()
    [row] = assert_artifacts_valid(artifacts)["witnesses"]
    (repo.root / FREEZE).parent.mkdir(parents=True)
    written = repo.runner(
        "freeze",
        "--assertion",
        FLAKY_ASSERTION,
        "--lock",
        str(artifacts / "fixture.lock"),
        "--witness",
        str(artifacts / row["file"]),
        "--report",
        str(artifacts / "classification.json"),
        "--failures",
        str(row["failures"]),
        "--runs",
        str(row["runs"]),
        "--expires-in-hours",
        "24",
        "--out",
        FREEZE,
    )
    assert written.code == 0, written.output
    return (repo.root / FREEZE).read_text()


def start_frozen(repo: BazelRepo, freeze: str) -> None:
    repo.reset()
    (repo.root / FREEZE).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / FREEZE).write_text(freeze)


def test_a_flake_under_a_valid_freeze_is_green_never_served_from_cache_and_red_once_it_expires(repo, flaky_freeze):
    # The same flags on every run (libfaketime in the test's environment, reading its offset
    # from a file): only the file moves the gate's clock past the freeze's 24-hour expiry.
    start_frozen(repo, flaky_freeze)
    clock = ShiftedClock(repo.output_root.parent)
    shifted = [f"--test_env={name}={value}" for name, value in clock.env().items()]
    expiry = expires_at(repo.root / FREEZE)
    green = repo.gate(*shifted)
    assert green.code == 0 and f"frozen by {FREEZE}" in green.output, green.output
    assert_artifacts_valid(repo.artifacts())
    # A freeze in the package makes the macro tag the test external: Bazel runs it again.
    again = repo.gate(*shifted)
    assert again.code == 0 and "(cached)" not in again.output and f"frozen by {FREEZE}" in again.output, again.output
    clock.past(expiry)
    red = repo.gate(*shifted)
    assert (
        red.code == 3 and f"expired at {expiry:%Y-%m-%dT%H:%M:%SZ}" in red.output and "(cached)" not in red.output
    ), red.output
    assert still_valid(expiry), "the machine's clock passed the expiry: the red run proves nothing about the shift"


def test_without_the_changed_file_list_the_test_fails_and_says_how_to_declare_it(repo):
    repo.reset()
    run = repo.bazel("test", "--test_output=all", TARGET)
    assert run.code == 3 and "the gate needs the changed-file list as one file" in run.output, run.output


def test_without_the_runner_pex_nothing_runs_and_bazel_names_the_missing_file(repo):
    repo.reset()
    pex = repo.root / "dist/runner/witness-gate.pex"
    aside = pex.with_name("aside.pex")
    pex.rename(aside)
    try:
        run = repo.gate()
    finally:
        aside.rename(pex)
    assert run.code == 1 and "missing input file '//:dist/runner/witness-gate.pex'" in run.output, run.output
    assert "PASSED" not in run.output, run.output


def test_a_runner_whose_bytes_differ_from_the_pin_fails_the_test(repo):
    repo.reset()
    run = repo.gate("--//bazel:runner_sha256=" + "0" * 64)
    assert run.code == 3 and "not the pinned --//bazel:runner_sha256" in run.output, run.output


def test_the_review_judges_the_suite_bazel_declares_from_build_bazel_alone_and_its_build_file_is_a_control(repo):
    # One declaration: the base's own Bazel prints the suites (bazel/suites.py), and review gates
    # those; a base reviewed without that document is refused.
    repo.reset()
    document = repo.output_root.parent / "suites.json"
    listed = subprocess.run(
        [str(repo.root / "bazel/suites.py"), f"--output-file={document}"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env={**host_env(), "BAZEL": f"bazel --output_user_root={repo.output_root}"},
    )
    assert listed.returncode == 0, listed.stderr
    graph = json.loads(document.read_text())
    schemas.validate("suites", graph, "suites.json")
    [suite] = graph["suites"]
    assert (suite["name"], suite["address"], suite["import_paths"]) == (
        "examples.orders.properties",
        TARGET,
        ["examples/orders/src"],
    )
    assert "examples/orders/BUILD.bazel" in suite["oracle"] and IMPL in suite["impl"]
    repo.git("checkout", "-q", "-B", "patch")
    repo.edit(IMPL, *BUG)
    repo.commit("a bug")
    # The regression this document's review blocks is the Bazel story's (bazel_adopt_test.py,
    # through the copied job); here the refusal without it, and the build file as a control.
    without = repo.runner(
        "review", "--base", "main", "--head", "patch", "--out", str(repo.output_root.parent / "review-without")
    )
    assert without.code == 2 and "examples/orders/BUILD.bazel declare gated targets" in without.output, without.output
    repo.edit(
        "examples/orders/BUILD.bazel", 'fixture = ":orders-fixture",', 'fixture = ":orders-fixture",\n    replays = 1,'
    )
    repo.commit("and fewer replays")
    mixed = repo.runner(
        "review",
        "--base",
        "main",
        "--head",
        "patch",
        "--suites",
        str(document),
        "--out",
        str(repo.output_root.parent / "review-mixed"),
    )
    assert (
        mixed.code == 1 and "mixed_edit: the patch changes implementation and oracle paths" in mixed.output
    ), mixed.output
    assert "suites: examples.orders.properties (declared in the base's build graph" in mixed.output, mixed.output
    assert (
        "oracle edit: examples/orders/BUILD.bazel (owner: gate controls (declares gated targets))" in mixed.output
    ), mixed.output


def test_the_changed_list_skips_bazels_convenience_symlinks_and_nothing_else(tmp_path: Path):
    repo = GitRepo(tmp_path / "plain")
    (repo.root / "src").mkdir(parents=True)
    (repo.root / "src/app.py").write_text("x = 1\n")
    repo.git("init", "-q", "-b", "main")
    repo.commit("base")
    (repo.root / "src/app.py").write_text("x = 2\n")
    (repo.root / "bazel-out").symlink_to(tmp_path)  # what `bazel test` leaves behind, unignored
    (repo.root / "bazel-plain").symlink_to(tmp_path)
    (repo.root / "bazel-notes.txt").write_text("a file of the branch, named like one\n")
    listed = subprocess.run(
        [str(SOURCE / "bazel/changed-files.sh"), "HEAD"], cwd=repo.root, capture_output=True, text=True, check=True
    )
    assert listed.stdout.splitlines() == ["bazel-notes.txt", "src/app.py"]
