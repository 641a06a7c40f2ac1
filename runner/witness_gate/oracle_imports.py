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
import builtins
import sys
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


# What a suite's modules may use and still say, through their `import` statements alone,
# everything they reach (`hidden_reach`). Allow-lists, not deny-lists: an honest base reads a
# file or imports by name in more ways than any list of them (`os.fwalk`, `io.FileIO`,
# `pydoc.locate`, `xml.etree.ElementTree.parse`), and a construct missed would let a head's
# change to what that code reads skip the suite, while one listed wrongly only runs a suite
# that could have been skipped.
# Modules of the standard library that neither read files nor import by a computed name
# (`json` and `csv` parse what they are handed; opening it needs `open`, which is not allowed;
# `zoneinfo` is not among them: it imports the `tzdata` package by name, which a tree may hold):
_PURE_MODULES = frozenset(
    {
        "__future__", "abc", "array", "base64", "binascii", "bisect", "calendar", "cmath", "collections",
        "colorsys", "contextlib", "contextvars", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib",
        "enum", "errno", "fnmatch", "fractions", "functools", "hashlib", "heapq", "hmac", "html", "ipaddress",
        "itertools", "json", "keyword", "math", "numbers", "operator", "pprint", "queue", "random", "re",
        "secrets", "statistics", "string", "struct", "textwrap", "threading", "time", "typing", "unicodedata",
        "urllib.parse", "uuid", "warnings", "weakref", "zlib", "concurrent.futures",
    }
)  # fmt: skip
# What the gate itself hands a suite's modules (outside the tree, not the head's to change).
_GATE_MODULES = frozenset({"hypothesis", "hypothesis.strategies", "hypothesis.stateful", "witness_gate", "pytest"})
# Builtins that neither read files, import, run code from text nor reach other modules'
# objects (`open`, `__import__`, `exec`, `eval`, `compile`, `globals`, `vars`, `help`,
# `breakpoint` and `input` are not among them).
_PURE_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod",
        "complex", "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hasattr", "hash",
        "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next",
        "object", "oct", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set",
        "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip", "getattr", "setattr",
        "delattr", "aiter", "anext", "memoryview", "NotImplemented", "Ellipsis", "None", "True", "False",
        "__name__", "__doc__", "__debug__",
    }
)  # fmt: skip
_BUILTIN_NAMES = frozenset(dir(builtins))
# Dunder attributes that only a class's own protocol uses; any other (`__file__`, `__spec__`,
# `__globals__`, `__code__`, `__subclasses__`, `__dict__`...) leads to a module's location or
# to objects its imports do not name.
_PURE_DUNDERS = frozenset(
    {
        "__init__", "__post_init__", "__new__", "__name__", "__qualname__", "__doc__", "__repr__", "__str__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__",
        "__iter__", "__next__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__enter__",
        "__exit__", "__call__", "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
        "__neg__", "__pos__", "__abs__", "__slots__", "__all__", "__version__", "__match_args__",
    }
)  # fmt: skip
# Attributes that read, list or test files or import by name whatever module they come
# from (a third-party reader, pytest's `importorskip`), and names pytest gives a test.
_HIDING_ATTRIBUTES = frozenset(
    {
        "open", "read", "load", "loadtxt", "genfromtxt", "fromfile", "listdir", "scandir", "walk", "iterdir",
        "glob", "rglob", "iglob", "exists", "isfile", "isdir", "is_file", "is_dir", "stat", "lstat", "getsize",
        "access", "readlink", "system", "popen", "importorskip", "readlines", "readall", "readinto",
        "locate", "import_module", "import_string", "resolve_name", "get_type_hints", "fwalk", "FileIO",
    }
)  # fmt: skip
_HIDING_PREFIXES = ("read_", "load_", "exec", "spawn", "posix_spawn", "getsource")
_HIDING_NAMES = frozenset({"pytest_plugins", "monkeypatch", "mocker"})


def hidden_reach(source: bytes, in_tree: Callable[[str], bool] = lambda name: False) -> str | None:
    """The first construct of `source` by which its module may import a module or read a
    file that no `import` statement names, as "line N: <construct>", or None when its
    `import` statements say all it reaches (pure). It imports only modules of the tree
    (`in_tree`: a dotted name an import path holds; relative imports), pure modules of the
    standard library and what the gate hands it; it calls no builtin outside the pure ones,
    touches no dunder outside a class's own protocol and names no file reader. A module that
    does not parse cannot be read at all."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as error:
        return f"it does not parse ({type(error).__name__})"
    for node in ast.walk(tree):
        if (construct := _hiding(node, in_tree)) is not None:
            return f"line {getattr(node, 'lineno', 0)}: {construct}"
    return None


def _hiding(node: ast.AST, in_tree: Callable[[str], bool]) -> str | None:
    if isinstance(node, ast.Import):
        return next((f"import {a.name}" for a in node.names if not _known_module(a.name, in_tree)), None)
    if isinstance(node, ast.ImportFrom):
        module, names = node.module or "", [alias.name for alias in node.names]
        if node.level == 0 and not _known_module(module, in_tree):
            return f"from {module} import {names[0]}"
        named = [name for name in names if _hiding_attribute(name) or _hiding_name(name)]
        return f"from {'.' * node.level}{module} import {named[0]}" if named else None
    if isinstance(node, ast.Name) and _hiding_name(node.id):
        return node.id
    if isinstance(node, ast.Attribute) and (_hiding_attribute(node.attr) or _unknown_dunder(node.attr)):
        return f".{node.attr}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "delattr", "hasattr")
        and len(node.args) > 1
        and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))
    ):
        return f"{node.func.id}() with a computed name"
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (_hiding_attribute(node.value) or _unknown_dunder(node.value))
    ):
        return f"the string {node.value!r}"  # getattr(os, "listdir"), attrgetter("__globals__"), and their like
    return None


def _known_module(name: str, in_tree: Callable[[str], bool]) -> bool:
    """Whether an absolute import names a module whose reach its sources show: the tree's own
    (followed, read in turn) unless the standard library has it too (which one loads is the
    import path's order), a pure module of the standard library, or one the gate hands over."""
    top = name.split(".", 1)[0]
    if name in _PURE_MODULES or name in _GATE_MODULES:
        return True
    return top not in sys.stdlib_module_names and in_tree(name)


def _hiding_name(name: str) -> bool:
    if name in _HIDING_NAMES:
        return True
    if name.startswith("__") and name.endswith("__"):
        return name not in _PURE_BUILTINS and name not in _PURE_DUNDERS  # __file__, __spec__, __import__...
    return name in _BUILTIN_NAMES and name not in _PURE_BUILTINS and not name[0].isupper()


def _unknown_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__") and name not in _PURE_DUNDERS


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
