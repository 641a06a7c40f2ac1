"""A copy of examples/orders driven through the real CLI, one subprocess per command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from support.flaky import flaky_property_source

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "orders"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


class SampleRepo:
    """A copy of examples/orders with the spec's section 6 commands as methods."""

    def __init__(self, root: Path, python: str = sys.executable, python_path: str | None = None) -> None:
        self.root = root
        # The interpreter and import path the CLI runs with: this one's by default.
        self.python = python
        self.python_path = python_path or os.pathsep.join(os.path.abspath(entry) for entry in sys.path)
        self.lock = ".artifacts/fixture.lock"
        self.witnesses = root / ".artifacts" / "witnesses"
        self.report = root / ".artifacts" / "classification.json"

    def cli(self, *args: str, env: dict[str, str] | None = None) -> Run:
        """The CLI in the repository; `env` is added to this process's environment."""
        env = {
            **os.environ,
            "PYTHONPATH": self.python_path,
            "HYPOTHESIS_STORAGE_DIRECTORY": str(self.root / ".hypothesis"),
            **(env or {}),
        }
        done = subprocess.run(
            [self.python, "-m", "witness_gate", *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def pin(self, *extra: str) -> Run:
        return self.cli(
            "pin", "--fixture", "tests/fixtures/orders.json", "--generator-version", "3", "--out", self.lock, *extra
        )

    def check(self) -> Run:
        return self.cli(
            "check", "--lock", self.lock, "--properties", "tests/properties", "--out", ".artifacts/witnesses"
        )

    def classify(self, *changed: str) -> Run:
        (self.root / "changed.txt").write_text("".join(f"{path}\n" for path in changed))
        return self.cli(
            "classify", "--lock", self.lock, "--witnesses", ".artifacts/witnesses", "--diff-paths", "changed.txt"
        )

    def gate(self, *changed: str, extra: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Run:
        (self.root / "changed.txt").write_text("".join(f"{path}\n" for path in changed))
        return self.cli(
            "gate",
            "--fixture",
            "tests/fixtures/orders.json",
            "--generator-version",
            "3",
            "--properties",
            "tests/properties",
            "--out",
            ".artifacts/gate",
            "--diff-paths",
            "changed.txt",
            *extra,
            env=env,
        )

    def gate_json(self) -> dict:
        return json.loads((self.root / ".artifacts/gate/gate.json").read_text())

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def configure(self, line: str) -> None:
        """Adds a `key = value` line to `[tool.witness-gate]` (not to the suite tables after it)."""
        self.edit("pyproject.toml", "[tool.witness-gate]\n", f"[tool.witness-gate]\n{line}\n")

    def only_property(self, name: str, implementation: str, properties: str) -> None:
        """The example with one more module, `src/orders_app/<name>.py`, whose property
        module `tests/properties/<name>_props.py` is the only one."""
        for module in (self.root / "tests/properties").glob("*.py"):
            module.unlink()
        self.write(f"src/orders_app/{name}.py", implementation)
        self.write(f"tests/properties/{name}_props.py", properties)

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new))

    def witness_files(self) -> list[Path]:
        return sorted(self.witnesses.glob("*.json")) if self.witnesses.is_dir() else []

    def report_json(self) -> dict:
        return json.loads(self.report.read_text())

    def labels(self) -> list[str]:
        return [entry["label"] for entry in self.report_json()["witnesses"]]


def copy_example(target: Path, **interpreter: str) -> SampleRepo:
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".artifacts", "__pycache__", "BUILD", "BUILD.bazel"))
    return SampleRepo(target, **interpreter)


def add_flaky_property(repo: SampleRepo) -> None:
    repo.write("tests/properties/flaky_props.py", flaky_property_source())
