"""The bytecode the runner writes for its workers (`bytecode`): its own package and the
distributions every worker imports, hash-checked, found on the workers' import path only
(which leaves out the tree under review and the working directory), each file inside its
distribution's directory."""

from __future__ import annotations

import importlib.util
import marshal
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from support.tools import missing

import witness_gate

HASH_CHECKED = 0b11  # PEP 552: bit 0 of the header's flags says hash-based, bit 1 "check the source"


def _pyc(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def _flags(pyc: Path) -> int:
    return int.from_bytes(pyc.read_bytes()[4:8], "little")


def _worker(site: Path, code: str) -> str:
    """What `code` prints in an interpreter started as the workers are, importing from `site`."""
    flags = ("-P", "-S", "-s", "-B", "--check-hash-based-pycs", "always")
    argv = [sys.executable, *flags, "-c", f"import sys; sys.path[:] = [{str(site)!r}]; {code}"]
    return subprocess.run(argv, capture_output=True, text=True, check=True, env={}, timeout=60).stdout.strip()


def _write_for_workers(runner: Path, site: Path, *flags: str) -> None:
    _python(runner, f"from witness_gate import bytecode; bytecode.write_for_workers([{str(site)!r}])", *flags)


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
    _python(runner, f"from witness_gate import bytecode; bytecode.write_for_workers([{str(runner)!r}])")
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
    _python(runner, f"from witness_gate import bytecode; bytecode.write_for_workers([{str(runner)!r}])", "-B")
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
    # requires are compiled; what only an extra requires, Pygments (pytest's highlighter) and
    # a record entry outside the distribution's directory are not.
    site = tmp_path / "site"
    outside = tmp_path / "outside.py"
    outside.write_text("VALUE = 1\n")
    _distribution(
        site,
        "hypothesis",
        ["sorted_helper>=1", 'only-for-extra; extra == "cli"', "Pygments>=2"],
        ["hypothesis/__init__.py", "hypothesis/core.py", "../outside.py"],
    )
    _distribution(site, "sorted_helper", [], ["sorted_helper.py"])
    _distribution(site, "only_for_extra", [], ["only_for_extra.py"])
    _distribution(site, "unrelated", [], ["unrelated.py"])
    _distribution(site, "Pygments", [], ["pygments/lexers/python.py"])  # required, mostly not imported
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


def _hypothesis(tmp_path: Path, *modules: str) -> Path:
    """A site holding a `hypothesis` distribution of `modules` (name: source)."""
    site = tmp_path / "site"
    _distribution(site, "hypothesis", [], [f"hypothesis/{name}.py" for name in modules])
    return site


def test_a_runner_run_optimized_still_writes_the_code_workers_run_unoptimized(tmp_path: Path):
    # Workers run without -O and load the plain name; the hash check reads the source, not
    # the code: written at the runner's -O level, an assert in Hypothesis would vanish there.
    site = _hypothesis(tmp_path, "__init__")
    (site / "hypothesis/__init__.py").write_text("def check():\n    assert False, 'kept'\n")
    _write_for_workers(_runner_copy(tmp_path), site, "-O")
    code = "import hypothesis\ntry:\n hypothesis.check(); print('stripped')\nexcept AssertionError: print('kept')"
    assert _worker(site, code) == "kept"


def test_a_timestamp_pyc_planted_beside_a_source_is_replaced_before_any_worker_reads_it(tmp_path: Path):
    # A timestamp pyc is trusted on its source's time and size alone, even under
    # --check-hash-based-pycs always; whoever wrote into the install could plant one.
    site = _hypothesis(tmp_path, "__init__")
    source = site / "hypothesis/__init__.py"
    planted = compile("VALUE = 666\n", str(source), "exec")
    stat = source.stat()
    _pyc(source).parent.mkdir()
    # PEP 552's timestamp layout: magic, flags 0, the source's mtime and size, the code.
    header = importlib.util.MAGIC_NUMBER + bytes(4) + struct.pack("<II", int(stat.st_mtime), stat.st_size)
    _pyc(source).write_bytes(header + marshal.dumps(planted))
    assert _worker(site, "import hypothesis; print(hypothesis.VALUE)") == "666"  # the plant works on its own
    _write_for_workers(_runner_copy(tmp_path), site)
    assert _worker(site, "import hypothesis; print(hypothesis.VALUE)") == "1"
    assert _flags(_pyc(source)) == HASH_CHECKED


def test_a_source_that_does_not_compile_leaves_the_rest_compiled(tmp_path: Path):
    site = _hypothesis(tmp_path, "a_python2_leftover", "core")
    (site / "hypothesis/a_python2_leftover.py").write_text("print 'x'\n")
    _write_for_workers(_runner_copy(tmp_path), site)
    assert _pyc(site / "hypothesis/core.py").is_file()


def test_in_a_venv_of_linked_files_the_runners_own_pycs_go_where_workers_import_from(tmp_path: Path):
    # pex venvs link each file into site-packages: a worker imports through the link, and
    # looks for the bytecode beside the link, not beside its target.
    target = _runner_copy(tmp_path / "pex_root") / "witness_gate"
    venv = tmp_path / "venv"
    for source in target.rglob("*"):
        linked = venv / "witness_gate" / source.relative_to(target)
        if source.is_dir():
            linked.mkdir(parents=True, exist_ok=True)
        else:
            linked.parent.mkdir(parents=True, exist_ok=True)
            linked.symlink_to(source)
    _write_for_workers(venv, venv)
    assert _pyc(venv / "witness_gate/worker/main.py").is_file()


def test_an_install_the_runner_may_not_read_is_no_error_of_its_own(tmp_path: Path):
    # A runner that is not root meets a root-made __pycache__ it cannot open, and a directory
    # its distribution's record lists that it cannot look into: the workers compile, as
    # before, and nothing is raised (raised inside a worker's start, it would be told as the
    # code under test's failure, for every suite).
    # The system's interpreter: nothing of root's (its home, pyenv, Pants' caches) is that
    # user's to read; `bytecode` needs only the standard library.
    python, setpriv = (shutil.which(tool, path="/usr/bin:/bin") for tool in ("python3", "setpriv"))
    if os.geteuid() != 0 or setpriv is None or python is None:
        missing("root, util-linux's setpriv and a system python3, to run the runner as another user")
    work = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path is not open to other users
    try:
        site = _hypothesis(work, "private/module", "__init__", "core")
        (site / "hypothesis/__pycache__").mkdir(mode=0o700)
        runner = _runner_copy(work)
        for path in [work, *work.rglob("*")]:
            if path.name not in ("__pycache__", "private"):
                path.chmod(path.stat().st_mode | 0o755)
        (site / "hypothesis/private").chmod(0o700)
        code = f"from witness_gate import bytecode; bytecode.write_for_workers([{str(site)!r}])"
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", code]
        env = {"PYTHONPATH": str(runner)}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        shutil.rmtree(work)
