"""The bytecode the runner writes for its workers (`bytecode`): its own package and the
distributions every worker imports, hash-checked, found on the workers' import path only
(which leaves out the tree under review and the working directory), each file inside its
distribution's directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import witness_gate

HASH_CHECKED = 0b11  # PEP 552: bit 0 of the header's flags says hash-based, bit 1 "check the source"


def _pyc(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def _flags(pyc: Path) -> int:
    return int.from_bytes(pyc.read_bytes()[4:8], "little")


def _runner_copy(tmp_path: Path) -> Path:
    """The runner's package, copied without its bytecode, where a process can write it."""
    copy = tmp_path / "runner"
    shutil.copytree(
        Path(witness_gate.__file__).parent, copy / "witness_gate", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


def _python(runner: Path, code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(runner)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run(
        [sys.executable, *flags, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )


def test_the_runners_own_bytecode_is_written_hash_checked_so_it_never_stands_for_other_source(tmp_path: Path):
    # Workers run with -B, so the runner writes its worker-side modules' bytecode once. A pyc
    # the interpreter trusted without the source (unchecked hash, or a timestamp a copy can
    # keep) would run old code after the source changed: the edit below must show.
    runner = _runner_copy(tmp_path)
    _python(runner, "from witness_gate import bytecode; bytecode.write_for_workers([])")
    written = [_pyc(source) for source in sorted((runner / "witness_gate").rglob("*.py"))]
    assert all(pyc.is_file() for pyc in written), [str(pyc) for pyc in written if not pyc.is_file()]
    # The worker side is what this process never imported (Python wrote the rest as it imports).
    worker_side = [pyc for pyc in written if pyc.parent.parent.name == "worker"]
    assert worker_side and {_flags(pyc) for pyc in worker_side} == {HASH_CHECKED}
    module = runner / "witness_gate/worker/heap_layout.py"
    module.write_text(module.read_text() + "\nEDITED_AFTER_THE_BYTECODE = True\n")
    shown = _python(runner, "from witness_gate.worker import heap_layout; print(heap_layout.EDITED_AFTER_THE_BYTECODE)")
    assert shown.stdout.strip() == "True", shown.stdout + shown.stderr


def test_a_runner_told_not_to_write_bytecode_writes_none(tmp_path: Path):
    runner = _runner_copy(tmp_path)
    _python(runner, "from witness_gate import bytecode; bytecode.write_for_workers([])", "-B")
    assert not list(runner.rglob("*.pyc"))


def _distribution(site: Path, name: str, requires: list[str], record: list[str]) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(metadata) + "\n")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in [*record, f"{info.name}/RECORD"]))
    for path in record:
        if not path.startswith(".."):
            (site / path).parent.mkdir(parents=True, exist_ok=True)
            (site / path).write_text("VALUE = 1\n")


def test_the_distributions_every_worker_imports_are_compiled_and_nothing_they_do_not_own(tmp_path: Path):
    # An install as a fresh PEX or Pants venv leaves it: no bytecode. Hypothesis and what it
    # requires are compiled; what only an extra requires, and a record entry outside the
    # distribution's directory, are not.
    site = tmp_path / "site"
    outside = tmp_path / "outside.py"
    outside.write_text("VALUE = 1\n")
    _distribution(
        site,
        "hypothesis",
        ["sorted_helper>=1", 'only-for-extra; extra == "cli"'],
        ["hypothesis/__init__.py", "hypothesis/core.py", "../outside.py"],
    )
    _distribution(site, "sorted_helper", [], ["sorted_helper.py"])
    _distribution(site, "only_for_extra", [], ["only_for_extra.py"])
    _distribution(site, "unrelated", [], ["unrelated.py"])
    runner = _runner_copy(tmp_path)
    _python(runner, f"from witness_gate import bytecode; bytecode.write_for_workers([{str(site)!r}])")
    compiled = sorted(str(pyc.relative_to(tmp_path)) for pyc in tmp_path.rglob("*.pyc") if "runner" not in pyc.parts)
    tag = sys.implementation.cache_tag
    assert compiled == [
        f"site/__pycache__/sorted_helper.{tag}.pyc",
        f"site/hypothesis/__pycache__/__init__.{tag}.pyc",
        f"site/hypothesis/__pycache__/core.{tag}.pyc",
    ]
    assert {_flags(tmp_path / pyc) for pyc in compiled} == {HASH_CHECKED}
