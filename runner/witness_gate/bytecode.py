"""The bytecode workers read, written once per runner process where the install lets it.

Workers run with -B (`sandbox`), so a module with no bytecode beside its source is compiled
from source at every worker's start. Python writes bytecode as a process imports, but the
runner never imports the worker side of its own package, nor Hypothesis, and pytest's
assertion rewriting caches Hypothesis under a tag of its own: in a fresh PEX or Pants venv,
which holds no bytecode, every replay interpreter compiled Hypothesis again (0.1 s of CPU,
a third of its start), and the worker side of the runner (0.05 s).

Only the runner's own installation is compiled, never the tree under review: its package,
and the distributions every worker imports (`WORKER_DISTRIBUTIONS` and what they require,
extras aside), looked up on the workers' import path, which leaves out the tree and the
working directory (`sandbox.worker_path`), each file inside its distribution's directory.
The pycs are hash-checked (workers run with `--check-hash-based-pycs always`) and compiled
without optimization (workers run without -O), and any other pyc where a worker looks for
them is replaced: none stands for other source. The installation itself is trusted, as the
runner's own imports trust it (`integrity` checks a PEX's); a distribution that links a
directory elsewhere has its files compiled there.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import os
import py_compile
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from witness_gate.dependencies import project_key, required_project

# What a worker imports besides the runner: Hypothesis always (`worker.property_module`),
# pytest for a module of `@given` tests (`worker.pytest_module`).
WORKER_DISTRIBUTIONS = ("hypothesis", "pytest")
# Required, but mostly not imported: pytest highlights source with Pygments when it formats a
# failure, some twenty of its 343 modules, which took 0.54 s of the closure's 1.16 s to compile
# (in a fresh PEX root, as each Bazel test has, that is paid on every run).
_LEFT_OUT = ("pygments",)

_lock = threading.Lock()


def write_for_workers(import_path: Sequence[str]) -> None:
    """Once per process and import path, under a lock (a round's threads start workers at
    once). Never a verdict: an install it cannot read or write only leaves workers to
    compile, as before."""
    with _lock:
        _written(tuple(import_path))


@functools.cache
def _written(import_path: tuple[str, ...]) -> None:
    if sys.dont_write_bytecode:  # the caller said -B
        return
    with contextlib.suppress(OSError):
        runner = _runner_package(import_path)
        if runner is not None:
            _compile(sorted(runner.rglob("*.py")))
        for distribution in _closure(WORKER_DISTRIBUTIONS, import_path):
            _compile(_sources(distribution))


def _runner_package(import_path: tuple[str, ...]) -> Path | None:
    """This package where a worker imports it from: the first entry of its path that has it."""
    for entry in import_path:
        package = Path(entry, __name__.partition(".")[0])
        if (package / "__init__.py").is_file():
            return package
    return None


def _compile(sources: Iterable[Path]) -> None:
    """Each source's bytecode beside it, where a worker's import looks (not through links:
    a venv may link its files elsewhere), unless a hash-checked pyc of these very bytes is
    there already. Any other pyc is replaced: a timestamp pyc is trusted on its source's
    time and size alone, and whoever wrote into the install could have written it. Stops at
    the first that cannot be written (a read-only install)."""
    for source in sources:
        # Not importlib.util.cache_from_source: that honours this process's PYTHONPYCACHEPREFIX,
        # which the workers' fixed environment does not carry.
        cached = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
        try:
            if _holds(cached, source.read_bytes()):
                continue
            # optimize=0: workers run without -O and load this name, whatever this process runs with.
            py_compile.compile(
                str(source),
                str(cached),
                doraise=True,
                optimize=0,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
        except py_compile.PyCompileError:  # not Python this interpreter reads: a worker would fail on it too
            continue
        except OSError:
            return


def _holds(cached: Path, source: bytes) -> bool:
    """A hash-checked pyc of `source` (PEP 552: flags 0b11, then the source's hash)."""
    try:
        with cached.open("rb") as handle:
            header = handle.read(16)
    except FileNotFoundError:
        return False
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[4:8], "little") == 0b11
        and header[8:16] == importlib.util.source_hash(source)
    )


def _closure(names: Sequence[str], import_path: tuple[str, ...]) -> list[importlib.metadata.Distribution]:
    """The distributions named and those they require (`_LEFT_OUT` aside), found on
    `import_path` only; the first of a name there wins, as an import would."""
    found: dict[str, importlib.metadata.Distribution] = {}
    for distribution in importlib.metadata.distributions(path=list(import_path)):
        found.setdefault(project_key(distribution.metadata["Name"] or ""), distribution)
    chosen: dict[str, importlib.metadata.Distribution] = {}
    wanted = [project_key(name) for name in names]
    while wanted:
        name = wanted.pop()
        if name in chosen or name not in found or name in _LEFT_OUT:
            continue
        chosen[name] = found[name]
        for requirement in found[name].requires or ():
            required = required_project(requirement)
            if required and "extra" not in requirement.partition(";")[2]:
                wanted.append(required)
    return [chosen[name] for name in sorted(chosen)]


def _sources(distribution: importlib.metadata.Distribution) -> Iterator[Path]:
    """Its Python sources as its record lists them, each inside its directory. Named as an
    import finds them (a venv may link its files elsewhere): the pyc goes where it looks."""
    home = Path(os.path.normpath(str(distribution.locate_file(""))))
    for file in distribution.files or ():
        if file.suffix == ".py":
            source = Path(os.path.normpath(str(distribution.locate_file(file))))
            if source.is_relative_to(home) and source.is_file():
                yield source
