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
                base = directory[:len(directory) - (node.level - 1)] if node.level - 1 <= len(directory) else None
                if base is None:
                    continue
                stem = "/".join([*base, *(node.module.split(".") if node.module else [])])
                names += ["/" + stem, *("/" + "/".join(filter(None, [stem, alias.name])) for alias in node.names)]
            elif node.module:
                names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


def module_paths(name: str, import_paths: Iterable[str]) -> list[str]:
    """Where a candidate of `imported_names` may live in the repository (pure): the module
    file or package `__init__.py`, and those of each package on the way."""
    if name.startswith("/"):
        parts, roots = name[1:].split("/"), [""]
    else:
        parts, roots = name.split("."), ["" if root in ("", ".") else root.rstrip("/") + "/" for root in import_paths]
    found = []
    for root in roots:
        for depth in range(1, len(parts) + 1):
            stem = root + "/".join(parts[:depth])
            found += [f"{stem}.py", f"{stem}/__init__.py"]
    return found


def helpers(tree: Path, modules: Iterable[str], import_paths: Iterable[str], is_impl: Callable[[str], bool]) -> dict[str, str]:
    """Repository path -> the module that imports it, for every module of `tree` that the
    property `modules` import, directly or through other such modules, outside the
    implementation (`is_impl`): the implementation's own imports are the head's business."""
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
            for candidate in module_paths(name, roots):
                if candidate in seen or is_impl(candidate) or not (tree / candidate).is_file() or (tree / candidate).is_symlink():
                    continue
                seen.add(candidate)
                found[candidate] = module
                pending.append(candidate)
    return found
