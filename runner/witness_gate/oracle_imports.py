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
    roots = tuple(import_paths)
    found: dict[str, str] = {}
    pending = list(modules)
    seen = set(pending)
    while pending:
        module = pending.pop()
        try:
            source = (tree / module).read_bytes()
        except OSError:
            continue
        for name in imported_names(source, module):
            earlier: list[tuple[str, str]] = []  # (path, module it would be) under the roots already passed
            for root, relatives in _candidates(name, roots):
                for relative in relatives:
                    candidate = root + relative
                    if is_impl(candidate) or not (tree / candidate).is_file() or (tree / candidate).is_symlink():
                        continue
                    found.setdefault(candidate, module)
                    stem = _stem(relative)
                    found.update(
                        {
                            shadow: module
                            for shadow, shadow_stem in earlier
                            if shadow_stem == stem and shadow not in found
                        }
                    )
                    if candidate not in seen:
                        seen.add(candidate)
                        pending.append(candidate)
                earlier += [(root + relative, _stem(relative)) for relative in relatives]
    return found


def _stem(relative: str) -> str:
    """The dotted module a relative candidate is (`a/b.py` and `a/b/__init__.py`: `a/b`)."""
    return relative.removesuffix("/__init__.py").removesuffix(".py")
