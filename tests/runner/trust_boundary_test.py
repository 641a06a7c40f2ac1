"""The trust boundary, read from the import graph: the deciding side never imports the worker.

The runner decides; `witness_gate.worker` runs user code. Were a deciding module to import
a worker module, code written to run next to the code under test would run in the process
that decides, and the package layout would no longer say where user code can run. Every
module's imports are read from its source (pure): `import`, `from ... import` (relative
ones resolved), and `importlib.import_module` or `__import__` with a literal name, at any
depth (a function's lazy import counts too).
"""

from __future__ import annotations

import ast
from pathlib import Path

from witness_gate import sandbox

PACKAGE = Path(__file__).resolve().parents[2] / "runner" / "witness_gate"
WORKER = "witness_gate.worker"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool) -> set[str]:
    """Every module name `source` imports, with `from package import name` counted as
    `package.name` too (it may be a submodule)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            called = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else node.func.id
                if isinstance(node.func, ast.Name)
                else None
            )
            if called in ("import_module", "__import__"):
                names.add(node.args[0].value)
    return names


def in_worker(name: str) -> bool:
    return name == WORKER or name.startswith(WORKER + ".")


def worker_imports_of_the_deciding_side() -> dict[str, list[str]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        if in_worker(module):
            continue
        crossing = sorted(
            name
            for name in imported_names(path.read_text("utf-8"), module, path.name == "__init__.py")
            if in_worker(name)
        )
        if crossing:
            found[module] = crossing
    return found


def test_no_module_of_the_deciding_side_imports_the_worker():
    assert worker_imports_of_the_deciding_side() == {}


def test_every_form_of_import_is_seen():
    # The reader itself: a crossing written any of these ways is found.
    for source, module in [
        ("import witness_gate.worker.main\n", "witness_gate.check"),
        ("from witness_gate import worker\n", "witness_gate.check"),
        ("from witness_gate.worker.pytest_module import GivenTest\n", "witness_gate.check"),
        ("from .worker import main\n", "witness_gate.check"),
        ("def later():\n    from witness_gate.worker import heap_layout\n", "witness_gate.replay"),
        ("import importlib\nimportlib.import_module('witness_gate.worker.main')\n", "witness_gate.review"),
        ("__import__('witness_gate.worker')\n", "witness_gate.review"),
    ]:
        assert any(in_worker(name) for name in imported_names(source, module, False)), source
    assert not any(
        in_worker(name)
        for name in imported_names("from witness_gate import protocol, workers_notes\n", "witness_gate.check", False)
    )


def test_the_worker_boots_by_module_names_that_are_the_workers():
    # The sandbox starts a worker by a string it runs in the new interpreter, not by an
    # import of its own: those names must still be modules of the worker package.
    booted = {
        node.module for node in ast.walk(ast.parse(sandbox._BOOT)) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert booted and all(in_worker(name) for name in booted), booted
    for name in booted:
        assert (PACKAGE.parent / (name.replace(".", "/") + ".py")).is_file(), name
