"""The repository modules a suite's property modules import: oracle whether declared or not.

A strategy helper the properties import decides which inputs the search tries: were it the
head's, a patch could narrow the inputs beside its bug. So every module of the repository
that a property module imports (and that those import in turn), outside the implementation
prefixes, is oracle. Found from the base's sources alone, by reading their `import`
statements (no code runs): absolute names are looked up under the suite's import paths,
relative ones beside the importing module. A name found nowhere in the tree (the standard
library, a third-party package) is not the repository's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path


def imported_names(source: bytes, path: str) -> list[str]:
    """The modules `source` (at repository path `path`) imports, as repository-relative
    dotted candidates: absolute names as written, relative ones resolved against `path`'s
    directory and prefixed with "/" (already a path); `from a import b` also names `a.b`,
    which may be a module (pure)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                directory = path.split("/")[:-1]
                base = directory[: len(directory) - (node.level - 1)] if node.level - 1 <= len(directory) else None
                if base is None:
                    continue
                stem = "/".join([*base, *(node.module.split(".") if node.module else [])])
                names += ["/" + stem, *("/" + "/".join(filter(None, [stem, alias.name])) for alias in node.names)]
            elif node.module:
                names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


# What lets a module import a module, or read a file, that no `import` statement names, so
# that its suite's closure cannot be read from its sources (`hidden_reach`). Generous on
# purpose: a construct listed wrongly only runs a suite that could have been skipped.
# Modules whose use imports or reads by a name computed at run time (unpickling and mocks
# import by name too; `logging.config` resolves handler classes by name):
_HIDING_MODULES = frozenset(
    {
        "importlib", "pkgutil", "runpy", "pkg_resources", "imp", "zipimport", "site", "builtins", "ctypes",
        "subprocess", "glob", "fileinput", "linecache", "shutil", "zipfile", "tarfile", "shelve", "dbm", "mmap",
        "pickle", "marshal", "doctest", "unittest.mock", "mock", "logging.config",
    }
)  # fmt: skip
# Names: the dynamic import and code builtins, a module's own location (a path relative to
# it), pytest's plugin list and the fixtures that patch by a dotted name.
_HIDING_NAMES = frozenset(
    {
        "__import__", "exec", "eval", "compile", "open", "__file__", "__path__", "__spec__", "__loader__",
        "__builtins__", "pytest_plugins", "monkeypatch", "mocker",
    }
)  # fmt: skip
# Attributes (on whatever object) and names imported from a module: reading, listing or
# testing files (os, pathlib, io, numpy's and pandas' readers), starting programs, changing
# where imports look, pytest's import by name.
_HIDING_ATTRIBUTES = frozenset(
    {
        "open", "read", "load", "loadtxt", "genfromtxt", "fromfile", "listdir", "scandir", "walk", "iterdir",
        "glob", "rglob", "iglob", "exists", "isfile", "isdir", "is_file", "is_dir", "stat", "lstat", "getsize",
        "access", "readlink", "system", "popen", "meta_path", "path_hooks", "path_importer_cache", "importorskip",
    }
)  # fmt: skip
_HIDING_PREFIXES = ("read_", "load_", "exec", "spawn", "posix_spawn", "getsource")


def hidden_reach(source: bytes) -> str | None:
    """The first construct of `source` by which its module may import a module or read a
    file that no `import` statement names (dynamic imports, file reads, `sys.path`), as
    "line N: <construct>", or None when its `import` statements say all it reaches (pure).
    A module that does not parse cannot be read at all."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as error:
        return f"it does not parse ({type(error).__name__})"
    for node in ast.walk(tree):
        if (construct := _hiding(node)) is not None:
            return f"line {getattr(node, 'lineno', 0)}: {construct}"
    return None


def strings(source: bytes) -> list[str]:
    """The string constants of `source` that could name a relative path, in order (pure): a
    directory of templates or a data file a library reads by a name no listed construct shows."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and 0 < len(node.value) <= 255
        and not node.value.startswith("/")
        and not any(character in node.value for character in "\0\n")
    ]


def _hiding(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        return next((f"import {a.name}" for a in node.names if _hiding_module(a.name)), None)
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if node.level == 0 and _hiding_module(module):
            return f"from {module} import"
        named = [a.name for a in node.names if _hiding_attribute(a.name) or a.name in _HIDING_NAMES]
        return f"from {'.' * node.level}{module} import {named[0]}" if named else None
    if isinstance(node, ast.Name) and node.id in _HIDING_NAMES:
        return node.id
    if isinstance(node, ast.Attribute):
        if _hiding_attribute(node.attr):
            return f".{node.attr}"
        if node.attr == "path" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            return "sys.path"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "hasattr")
        and len(node.args) > 1
        and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))
    ):
        return f"{node.func.id}() with a computed name"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _hiding_attribute(node.value):
        return f"the string {node.value!r}"  # getattr(os, "listdir"), and its like
    return None


def _hiding_module(name: str) -> bool:
    return any(name == hiding or name.startswith(hiding + ".") for hiding in _HIDING_MODULES)


def _hiding_attribute(name: str) -> bool:
    return name in _HIDING_ATTRIBUTES or name.startswith(_HIDING_PREFIXES)


def module_paths(name: str, import_paths: Iterable[str]) -> list[str]:
    """Where a candidate of `imported_names` may live in the repository (pure): the module
    file or package `__init__.py`, and those of each package on the way, root by root in
    import order."""
    return [root + relative for root, relatives in _candidates(name, import_paths) for relative in relatives]


def _candidates(name: str, import_paths: Iterable[str]) -> list[tuple[str, list[str]]]:
    if name.startswith("/"):
        parts, roots = name[1:].split("/"), [""]
    else:
        parts, roots = name.split("."), ["" if root in ("", ".") else root.rstrip("/") + "/" for root in import_paths]
    relatives = [
        f"{'/'.join(parts[:depth])}{suffix}" for depth in range(1, len(parts) + 1) for suffix in (".py", "/__init__.py")
    ]
    return [(root, relatives) for root in roots]


def helpers(
    tree: Path, modules: Iterable[str], import_paths: Iterable[str], is_impl: Callable[[str], bool]
) -> dict[str, str]:
    """Repository path -> the module that imports it, for every module of `tree` that the
    `modules` (the property modules, and what pytest reads on the way to them) import,
    directly or through other such modules, outside the implementation (`is_impl`): the
    implementation's own imports are the head's business. Where a helper is found under an
    import path, the same module under every earlier import path is listed too, existing or
    not: a module there would shadow it (whoever owns that directory)."""
    found: dict[str, str] = {}

    def visit(module: str, by_root: list[tuple[str, list[str]]]) -> list[str]:
        followed = []
        earlier: list[tuple[str, str]] = []  # (path, module it would be) under the roots already passed
        for root, relatives in by_root:
            for relative in relatives:
                candidate = root + relative
                if is_impl(candidate) or not (tree / candidate).is_file() or (tree / candidate).is_symlink():
                    continue
                found.setdefault(candidate, module)
                stem = _stem(relative)
                found.update(
                    {shadow: module for shadow, shadow_stem in earlier if shadow_stem == stem and shadow not in found}
                )
                followed.append(candidate)
            earlier += [(root + relative, _stem(relative)) for relative in relatives]
        return followed

    _walk(tree, modules, tuple(import_paths), visit)
    return found


@dataclass(frozen=True)
class Reach:
    """What a suite's modules reach through their `import` statements (`reach`)."""

    modules: dict[str, str]  # each module of the tree they import, the implementation's too -> its importer
    candidates: frozenset[str]  # every path one of their imports is looked up at, existing or not


def reach(tree: Path, modules: Iterable[str], import_paths: Iterable[str]) -> Reach:
    """Every module of `tree` that `modules` import, directly or through each other, the
    implementation included (a suite's closure, `selection.selection`), and every path those
    imports are looked up at: a module the head adds at one of them, existing before or
    not, changes what the import finds. A module is followed only where its real file is
    inside the tree (a link out of it blocks on its own)."""
    inside = tree.resolve()
    found: dict[str, str] = {}
    candidates: set[str] = set()

    def visit(module: str, by_root: list[tuple[str, list[str]]]) -> list[str]:
        paths = [root + relative for root, relatives in by_root for relative in relatives]
        candidates.update(paths)
        followed = [
            path for path in paths if (tree / path).is_file() and (tree / path).resolve().is_relative_to(inside)
        ]
        for path in followed:
            found.setdefault(path, module)
        return followed

    _walk(tree, modules, tuple(import_paths), visit)
    return Reach(found, frozenset(candidates))


def _walk(
    tree: Path,
    modules: Iterable[str],
    roots: tuple[str, ...],
    visit: Callable[[str, list[tuple[str, list[str]]]], list[str]],
) -> None:
    """Reads each of `modules` once, and each module `visit` returns for one of their imports
    (given the importing module and the import's candidates, root by root), transitively."""
    pending = list(modules)
    seen = set(pending)
    while pending:
        module = pending.pop()
        try:
            source = (tree / module).read_bytes()
        except OSError:
            continue
        for name in imported_names(source, module):
            for path in visit(module, _candidates(name, roots)):
                if path not in seen:
                    seen.add(path)
                    pending.append(path)


def _stem(relative: str) -> str:
    """The dotted module a relative candidate is (`a/b.py` and `a/b/__init__.py`: `a/b`)."""
    return relative.removesuffix("/__init__.py").removesuffix(".py")
