"""The repository of docs/adopt.md's guide, adopted for real: a small ledger library whose
files are the guide's file blocks, with this build's two wheels in `wheels/` (the test's
runtime packages, `./pants package runner:dist rules:dist`), the guide's `./pants` launcher
and its lockfile generated, committed as `main`. Its own pantsd serves the module that
adopted it (tests/e2e/adopt_test.py, adopt_job_test.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from support.git_repo import GitRepo, Run
from support.guide import commands, guide_blocks

SOURCE = Path(__file__).resolve().parents[2]
ARTIFACTS = Path("dist/test/tests.properties")


class Adopter(GitRepo):
    def __init__(self, root: Path, caches: Path) -> None:
        super().__init__(root)
        # Pants caches the plugin-resolving process by its requirement string, not the
        # wheel's bytes: a store of this run's own keeps a rebuilt 0.4.0 wheel from meeting
        # a stale resolve (downloads, keyed by content, are shared).
        self.env = {**os.environ, "PANTS_LOCAL_STORE_DIR": str(caches / "store")}

    def sh(self, command: str, timeout: int = 900) -> Run:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.root, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def reset(self, ref: str = "main") -> None:
        self.git("checkout", "-q", "-f", ref)
        self.git("clean", "-fdq", "-e", ".venv")
        shutil.rmtree(self.root / "dist", ignore_errors=True)

    def pants_test(self, *options: str) -> Run:
        return self.sh(" ".join(["./pants --no-dynamic-ui test --test-output=all", *options, "::"]))

    def artifact(self, name: str) -> dict:
        return json.loads((self.root / ARTIFACTS / name).read_text())


def adopted(work: Path) -> Iterator[Adopter]:
    """The guide's repository under `work`, for a module; its Pants daemon stopped after."""
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
    (root / ".gitignore").write_text(
        "/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n/.venv/\n/.artifacts/\n__pycache__/\n"
    )
    adopter = Adopter(root, work / "caches")
    adopter.git("init", "-q", "-b", "main")
    [lock, _] = commands("pants")
    locked = adopter.sh(lock)
    assert locked.code == 0, locked.output
    adopter.commit("the ledger, gated")
    yield adopter
    adopter.stop_pantsd()
