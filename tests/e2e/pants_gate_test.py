"""`pants test` with the gate, for real: a copy of this project (plugin, runner, orders
example) in a temporary git repository, driven through its own `./pants`.

Each test starts from a commit of that repository and edits the working tree, which
the gate reads as the diff (`[witness-gate].base = "HEAD"`: uncommitted and untracked
files). One pantsd serves the whole module, so later runs are quick.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from support.flaky import flaky_property_source
from witness_gate import schemas

SOURCE = Path(__file__).resolve().parents[2]
COPIED = ["pants", "pants.toml", "BUILD", "pyproject.toml", "3rdparty", "runner", "rules", "schemas", "examples/orders"]
TARGET = "examples/orders:properties"
ARTIFACTS = Path("dist/test/examples.orders.properties")
IMPL = "examples/orders/src/orders_app/pricing.py"
ORACLE = "examples/orders/tests/properties/orders_props.py"
FIXTURE = "examples/orders/tests/fixtures/orders.json"
FREEZE = ".witness-gate/freezes/flake.json"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')

@dataclass
class Run:
    code: int
    output: str


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.commits: dict[str, str] = {}

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.email=e2e@witness-gate", "-c", "user.name=e2e", *args],
            cwd=self.root, capture_output=True, text=True, check=True,
        )
        return done.stdout.strip()

    def commit(self, name: str, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        self.commits[name] = self.git("rev-parse", "HEAD")

    def start_from(self, name: str) -> None:
        self.git("reset", "-q", "--hard", self.commits[name])
        self.git("clean", "-fdq")  # ignored state (pantsd, dist/) stays
        shutil.rmtree(self.root / "dist", ignore_errors=True)

    def pants_test(self, *args: str) -> Run:
        done = subprocess.run(
            ["./pants", "--no-dynamic-ui", "test", "--test-output=all", *args, TARGET],
            cwd=self.root, capture_output=True, text=True, timeout=1200,
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1))

    def artifact(self, relative: str) -> dict:
        return json.loads((self.root / ARTIFACTS / relative).read_text())

    def runner(self, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(entry) for entry in sys.path)}
        return subprocess.run([sys.executable, "-m", "witness_gate", *args], cwd=self.root, env=env, capture_output=True, text=True)

    def write_freeze(self) -> dict:
        [row] = self.artifact("gate.json")["witnesses"]
        done = self.runner(
            "freeze", "--assertion", row["assertion_id"], "--lock", str(ARTIFACTS / "fixture.lock"),
            "--witness", str(ARTIFACTS / row["file"]), "--report", str(ARTIFACTS / "classification.json"),
            "--failures", str(row["failures"]), "--runs", str(row["runs"]), "--expires-in-hours", "24", "--out", FREEZE,
        )
        assert done.returncode == 0, done.stderr
        return json.loads((self.root / FREEZE).read_text())

    def rewrite_freeze(self, **fields) -> None:
        path = self.root / FREEZE
        path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))

    def stop_pantsd(self) -> None:
        for pid_file in (self.root / ".pids").glob("*/pantsd/pid"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except (ValueError, ProcessLookupError):
                pass


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    root = tmp_path_factory.mktemp("e2e") / "repo"
    for entry in COPIED:
        source, target = SOURCE / entry, root / entry
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    (root / ".gitignore").write_text("/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n__pycache__/\n")
    project = Project(root)
    project.git("init", "-q", "-b", "main")
    project.commit("shipped", "the orders example, as shipped")
    (root / "examples/orders/tests/properties/flaky_props.py").write_text(flaky_property_source())
    project.commit("flaky", "a property that fails on some replays")
    yield project
    project.stop_pantsd()


@pytest.fixture(scope="module")
def frozen(project: Project) -> str:
    """From the flaky commit: one red run for the artifacts, then a freeze written from
    them; the freeze file's text, which the tests below start from."""
    project.start_from("flaky")
    project.pants_test()
    project.write_freeze()
    return (project.root / FREEZE).read_text()


def flake_with_freeze(project: Project, frozen: str) -> None:
    project.start_from("flaky")
    (project.root / FREEZE).parent.mkdir(parents=True, exist_ok=True)
    (project.root / FREEZE).write_text(frozen)


def assert_artifacts_valid(project: Project) -> None:
    for name, schema in [("fixture.lock", "lock"), ("classification.json", "report"), ("gate.json", "gate")]:
        schemas.validate(schema, project.artifact(name), name)
    for path in (project.root / ARTIFACTS / "witnesses").glob("*.json"):
        schemas.validate("witness", json.loads(path.read_text()), path.name)


def test_clean_example_passes_and_an_unchanged_rerun_is_served_from_cache(project):
    project.start_from("shipped")
    first = project.pants_test()
    assert first.code == 0, first.output
    assert "gate: pass" in first.output
    assert_artifacts_valid(project)
    second = project.pants_test()
    assert second.code == 0, second.output
    assert "(memoized)" in second.output or "(cached locally)" in second.output, second.output


def test_flake_is_red_without_a_freeze_and_green_with_a_valid_one(project):
    project.start_from("flaky")
    red = project.pants_test()
    assert red.code != 0, red.output
    assert re.search(r"flake: prop_sometimes failed ([1-9]|[12][0-9])/30 replays", red.output), red.output
    assert "it follows the global random state" in red.output
    assert "No valid freeze covers this witness" in red.output
    frozen = project.write_freeze()
    green = project.pants_test()
    assert green.code == 0, green.output
    assert f"frozen by {FREEZE}" in green.output
    [row] = project.artifact("gate.json")["witnesses"]
    assert (row["witness_hash"], row["blocks"]) == (frozen["witness_hash"], False)
    assert_artifacts_valid(project)


def test_an_expired_freeze_turns_the_next_run_red_with_nothing_else_changed(project, frozen):
    flake_with_freeze(project, frozen)
    now = datetime.now(timezone.utc)
    expiry = now + timedelta(seconds=45)
    project.rewrite_freeze(created_at=(now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), expires_at=expiry.strftime("%Y-%m-%dT%H:%M:%SZ"))
    green = project.pants_test()
    assert datetime.now(timezone.utc) < expiry, "the machine was too slow to see the freeze before it expired"
    assert green.code == 0, green.output
    time.sleep(max(0.0, (expiry - datetime.now(timezone.utc)).total_seconds()) + 2)
    red = project.pants_test()
    assert red.code != 0, red.output
    assert "expired at" in red.output


def test_fixture_changed_in_the_same_diff_as_a_freeze_is_red(project, frozen):
    flake_with_freeze(project, frozen)
    project.edit(FIXTURE, '{"lines": [], "claimed_total": 0}', '{"lines": [], "claimed_total": 0},\n  {"lines": [{"qty": 1, "price": 1}], "claimed_total": 1}')
    run = project.pants_test()
    assert run.code != 0, run.output
    assert "one patch may not refresh the pin and the silence together" in run.output


def test_with_the_gate_disabled_any_failure_is_red_and_no_freeze_applies(project, frozen):
    flake_with_freeze(project, frozen)
    run = project.pants_test("--no-witness-gate-enabled")
    assert run.code != 0, run.output
    assert "mode check_only" in run.output
    assert project.artifact("gate.json")["mode"] == "check_only"


def test_editing_the_build_declaration_with_the_implementation_is_a_mixed_edit(project):
    project.start_from("shipped")
    project.edit(IMPL, *BUG)
    project.edit("examples/orders/BUILD", 'fixture=":orders-fixture",', 'fixture=":orders-fixture",\n    replays=1,')
    run = project.pants_test()
    assert run.code != 0, run.output
    assert "mixed_edit: prop_order_total_non_negative failed 12/12 replays" in run.output


def test_code_under_test_that_exits_green_cannot_pass_the_target(project):
    # Forged output and the other hostile endings are the runner's tests (hostile_test.py);
    # here, that the target follows the gate's verdict and not the process's status.
    project.start_from("shipped")
    project.edit(IMPL, 'return line["qty"] * line["price"]', 'import os\n    if line["qty"] > 3:\n        os._exit(0)\n    return line["qty"] * line["price"]')
    run = project.pants_test()
    assert run.code != 0, run.output
    assert "regression: prop_order_total_non_negative" in run.output and "crashed" in run.output, run.output
    assert project.artifact("gate.json")["verdict"] == "blocked"


def test_skipping_the_gate_is_refused_not_reported_green(project):
    project.start_from("shipped")
    project.edit(IMPL, *BUG)
    run = project.pants_test("--witness-gate-skip")
    assert run.code != 0, run.output
    assert "the gate has no off switch" in run.output
