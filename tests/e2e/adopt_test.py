"""Adopting witness-gate from another repository, following docs/adopt.md to the letter.

The two wheels are this test's runtime packages (`./pants package runner:dist rules:dist`);
they go into `wheels/` of a separate git repository, a small ledger library whose files
are the guide's file blocks. Its own `./pants` installs the plugin by version, the runner
from its resolve, and runs its `pants test` through a pass, a regression, a mixed edit
and a flake frozen with the guide's command; then the guide's CLI path (the runner wheel
in a fresh venv) gates the same repository and reviews a pull request.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.flaky import flaky_property_source
from witness_gate import schemas

SOURCE = Path(__file__).resolve().parents[2]
GUIDE = SOURCE / "docs/adopt.md"
IMPL = "src/ledger/balance.py"
ORACLE = "tests/properties/ledger_props.py"
ARTIFACTS = Path("dist/test/tests.properties")
BUG = ('return sum(entry["amount"]', 'return sum(entry["amount"] - (1 if entry["amount"] > 5000 else 0)')


def guide_blocks(kind: str) -> dict[str, str]:
    """The guide's fenced blocks marked `<!-- file: PATH -->` or `<!-- run: NAME -->`."""
    text = GUIDE.read_text()
    return dict(re.findall(rf"<!-- {kind}: (\S+) -->\n```\w*\n(.*?)```", text, re.S))


def commands(name: str) -> list[str]:
    """One shell command per logical line of a run block (backslash continuations joined)."""
    return [line.strip() for line in guide_blocks("run")[name].replace("\\\n", " ").splitlines() if line.strip()]


@dataclass
class Run:
    code: int
    output: str


class Adopter:
    def __init__(self, root: Path, caches: Path) -> None:
        self.root = root
        # Pants caches the plugin-resolving process by its requirement string, not the
        # wheel's bytes: a store of this run's own keeps a rebuilt 0.2.0 wheel from meeting
        # a stale resolve (downloads, keyed by content, are shared).
        self.env = {**os.environ, "PANTS_LOCAL_STORE_DIR": str(caches / "store")}

    def sh(self, command: str, timeout: int = 900) -> Run:
        done = subprocess.run(["bash", "-c", command], cwd=self.root, env=self.env, capture_output=True, text=True, timeout=timeout)
        return Run(done.returncode, done.stdout + done.stderr)

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-c", "user.email=adopt@example", "-c", "user.name=adopter", *args],
                              cwd=self.root, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        assert old in path.read_text(), (relative, old)
        path.write_text(path.read_text().replace(old, new, 1))

    def reset(self, ref: str = "main") -> None:
        self.git("checkout", "-q", "-f", ref)
        self.git("clean", "-fdq", "-e", ".venv")
        shutil.rmtree(self.root / "dist", ignore_errors=True)

    def pants_test(self) -> Run:
        return self.sh("./pants --no-dynamic-ui test --test-output=all ::")


@pytest.fixture(scope="module")
def adopter(tmp_path_factory) -> Adopter:
    work = tmp_path_factory.mktemp("adopt")
    root = work / "ledger"
    (root / "wheels").mkdir(parents=True)
    wheels = sorted(Path.cwd().glob("*.whl"))  # this test's runtime packages, in its sandbox
    assert {w.name.split("-")[0] for w in wheels} == {"witness_gate", "witness_gate_pants"}, wheels
    for wheel in wheels:
        shutil.copy2(wheel, root / "wheels")
    shutil.copy2(SOURCE / "pants", root / "pants")  # the guide: copy the launcher
    for path, text in guide_blocks("file").items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / ".gitignore").write_text("/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n/.venv/\n/.artifacts/\n__pycache__/\n")
    adopter = Adopter(root, work / "caches")
    adopter.git("init", "-q", "-b", "main")
    [lock, _] = commands("pants")
    locked = adopter.sh(lock)
    assert locked.code == 0, locked.output
    adopter.commit("the ledger, gated")
    yield adopter
    for pid_file in (root / ".pids").glob("*/pantsd/pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (ValueError, ProcessLookupError):
            pass


def test_pants_test_passes_a_sound_library(adopter):
    adopter.reset()
    [_, test] = commands("pants")
    result = adopter.sh(test)
    assert result.code == 0, result.output
    assert json.loads((adopter.root / ARTIFACTS / "gate.json").read_text())["verdict"] == "pass"


def test_pants_test_blocks_a_regression_and_a_mixed_edit(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    red = adopter.pants_test()
    assert red.code == 1 and "regression: prop_balance_is_credits_minus_debits" in red.output, red.output
    assert "Block the patch" in red.output
    artifacts = adopter.root / ARTIFACTS
    for name, schema in [("fixture.lock", "lock"), ("classification.json", "report"), ("gate.json", "gate")]:
        schemas.validate(schema, json.loads((artifacts / name).read_text()), name)
    [row] = json.loads((artifacts / "gate.json").read_text())["witnesses"]
    schemas.validate("witness", json.loads((artifacts / row["file"]).read_text()), row["file"])

    adopter.edit(ORACLE, '"""The oracle:', '"""The oracle (reworded):')
    mixed = adopter.pants_test()
    assert mixed.code == 1 and "mixed_edit: prop_balance_is_credits_minus_debits" in mixed.output, mixed.output


def test_a_flake_is_red_until_the_guides_freeze_command_freezes_it(adopter):
    adopter.reset()
    adopter.git("checkout", "-q", "-B", "flaky")
    (adopter.root / "tests/properties/flaky_props.py").write_text(flaky_property_source())
    adopter.commit("a property that fails on some replays")
    red = adopter.pants_test()
    assert red.code == 1 and "flake: prop_sometimes" in red.output, red.output
    [row] = json.loads((adopter.root / ARTIFACTS / "gate.json").read_text())["witnesses"]
    [freeze] = commands("freeze")
    freeze = (freeze.replace("<file from the output>", Path(row["file"]).name)
              .replace("<failures>", str(row["failures"])).replace("<runs>", str(row["runs"])))
    written = adopter.sh(freeze)
    assert written.code == 0, written.output
    green = adopter.pants_test()
    assert green.code == 0 and "frozen by" in green.output, green.output


def test_the_cli_path_gates_and_reviews_the_same_repository(adopter):
    adopter.reset()
    for command in commands("cli"):
        done = adopter.sh(command)
        assert done.code == 0, (command, done.output)
    assert adopter.sh(".venv/bin/witness-gate --version").output.startswith("witness-gate 0.2.0")

    adopter.git("checkout", "-q", "-b", "patch")
    adopter.edit(IMPL, *BUG)
    adopter.commit("a bug")
    gate = [adopter.sh(command) for command in commands("cli-gate")][-1]
    assert gate.code == 1 and "regression: prop_balance_is_credits_minus_debits" in gate.output, gate.output

    [review] = commands("review")
    reviewed = adopter.sh(review)
    assert reviewed.code == 1, reviewed.output
    assert "ledger: regression: prop_balance_is_credits_minus_debits" in reviewed.output
