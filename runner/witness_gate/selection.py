"""Which suites a change reaches: the suites a review runs, and why each other is unaffected.

A suite of the build graph reaches what its graph declares (its closure) and runs in a tree
of that closure alone, so a change it does not declare cannot reach it (`selection`). A
suite declared in pyproject.toml runs in the whole tree and declares nothing, so its closure
is read from its sources (`pyproject_closure`: the modules its property modules import, and
where those imports look), never by running them; where its sources use anything that could
reach further (a module outside the pure ones, a file read, a dynamic import, a symbolic
link) it always runs (`pyproject_selection`).
A wrong "unaffected" lets a pull request skip its tests; a wrong "runs" only costs time, so
every doubt runs the suite.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from witness_gate import git, given_tests, oracle_imports, pytest_files
from witness_gate.config import GateConfig, Suite
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import Ownership
from witness_gate.paths import compiled_code, glob_matches, start_up_code
from witness_gate.properties import property_files


def real_locations(tree: Path, entries: list[str]) -> dict[str, str]:
    """Real location (a file or a whole directory) -> the path that reaches it, for each
    entry of the tree a symlink leads through (the entry itself, a directory above it, or
    a link inside a directory entry)."""
    found = {}
    root = tree.resolve()
    for entry in entries:
        start = tree / entry.rstrip("/")
        candidates = [start, *(start.rglob("*") if start.is_dir() else ())]
        for path in candidates:
            if not (path.is_symlink() or path.exists()):
                continue
            real = path.resolve()
            literal = root / path.relative_to(tree)
            if real != literal and real.is_relative_to(root):
                found[real.relative_to(root).as_posix()] = path.relative_to(tree).as_posix()
    return found


def selection(suite: Suite, ownership: Ownership, linked: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Whether a suite of the build graph runs for these changes, and why (pure). It runs
    when a changed path (added, modified or deleted) is in its closure (its implementation
    files, fixture, properties and oracle paths, and the real files behind closure paths that
    are symlinks, `linked`: real path -> closure path) or matches its oracle globs; lies under
    one of its source roots (a plug-in loaded by name, a module an optional import finds, one
    shadowing an import: the base's graph cannot list what the code finds there); or lies in
    the directory of a closure file or below it (package data read with `importlib.resources`);
    and every suite runs when a gate control, a freeze or anything else not one suite's own
    changed. Sound because a graph suite runs in a tree of its closure and of the changes that
    reach it: what it does not declare, it cannot read."""
    closure = _closure(suite, linked)
    changed = [*ownership.impl, *ownership.oracle]
    for path in changed:
        if any(glob_matches(path, pattern) for pattern in suite.oracle_globs):
            return True, f"runs: {path} matches its properties' glob"
        if (why := _reaches(suite, closure, path)) is not None:
            return True, f"runs: {path} {why}"
    if (control := _every_suites(ownership)) is not None:
        return True, control
    return False, (
        f"unaffected: none of the {len(changed)} changed paths is in its closure ({len(closure)} files), "
        "under its source roots or beside its files"
    )


def _every_suites(ownership: Ownership) -> str | None:
    """Why every suite runs, if a changed oracle path is no one suite's own (a gate control, a
    freeze, an oracle prefix)."""
    for path, who in ownership.oracle.items():
        if not who.startswith("suite "):
            return f"runs: {path} changed ({who}), which every suite depends on"
    return None


@dataclass(frozen=True)
class Closure:
    """What a suite declared in pyproject.toml can reach, read from the sources alone, in the
    base's tree and the landed one (`pyproject_closure`): no code runs to find it."""

    files: frozenset[str]  # its property modules, fixture, the modules they import, real files behind links
    looked_up: frozenset[str]  # where their imports and pytest's collection look, existing or not
    import_paths: tuple[str, ...]
    top_level: frozenset[str]  # what the base has at the top of each import path: "src/pkg" for src/pkg.py
    hidden: str | None = None  # why its sources cannot say what it reaches: it always runs
    links: frozenset[str] = frozenset()  # changed paths that are symbolic links in either tree


def pyproject_selection(closure: Closure, ownership: Ownership) -> tuple[bool, str]:
    """Whether a suite declared in pyproject.toml runs for these changes, and why (pure). Such
    a suite runs in the whole tree, so it is skipped only where its sources say everything it
    reaches: it runs when they cannot (`closure.hidden`: they use something outside the pure
    modules and builtins `oracle_imports.hidden_reach` allows); when a changed path (added,
    modified or deleted) is a symbolic link in either tree (`closure.links`), a file of its
    closure, a path one of its imports or pytest's collection looks at (a module the head adds
    there is what the import finds), or lies beside a file of its closure or below its
    directory (package data); when it names, under an import path, a
    top-level module of the standard library (which the standard library's own imports would
    find first) or one the base did not have (a third-party package's optional import may find
    it); when it is code an interpreter loads unseen (compiled code, start-up code: blocked
    anyway); and when a gate control, a freeze or an oracle prefix changed (said first)."""
    if closure.hidden is not None:
        return True, f"runs: its closure cannot be known from its sources: {closure.hidden}"
    if (control := _every_suites(ownership)) is not None:
        return True, control
    changed = [*ownership.impl, *ownership.oracle]
    for path in changed:
        if (why := _reaches_pyproject(closure, path)) is not None:
            return True, f"runs: {path} {why}"
    return False, (
        f"unaffected: none of the {len(changed)} changed paths is in its closure ({len(closure.files)} files, "
        "found from its imports), where its imports look, beside its files, or a new "
        "top-level module"
    )


def _reaches_pyproject(closure: Closure, path: str) -> str | None:
    if path in closure.links:
        return "is a symbolic link in the base's or the landed tree: where it leads, no source shows"
    if path in closure.files:
        return "is in its closure"
    if path in closure.looked_up:
        return "is where one of its imports (or pytest's collection) looks"
    if any(path.startswith(file.rpartition("/")[0] + "/") or "/" not in file for file in closure.files):
        return "is beside a file of its closure, or below its directory (package data)"
    if compiled_code(path) or start_up_code(path):
        return "is code an interpreter loads that no source shows"
    for root in closure.import_paths:
        prefix = import_prefix(root)
        if not path.startswith(prefix):
            continue
        name = path[len(prefix) :].split("/", 1)[0].split(".", 1)[0]
        if name in sys.stdlib_module_names:
            return f"is under import path {root} as {name}, a module of the standard library it would shadow"
        if prefix + name not in closure.top_level:
            return f"adds {name} under import path {root}, which the base did not have (an optional import may find it)"
    return None


def pyproject_closure(trees: Sequence[Path], suite: Suite, config: GateConfig) -> Closure:
    """A pyproject suite's `Closure`, read from each of `trees` (the base's, and the landed one
    where it could be written): the union of what each says."""
    import_paths = suite.import_paths or config.import_paths
    files: set[str] = set()
    looked_up: set[str] = set()
    hidden: list[str] = []
    for tree in trees:
        inside = tree.resolve()
        try:
            modules = [
                path.relative_to(tree).as_posix()
                for path in property_files([tree / entry for entry in suite.properties])
            ]
        except (WitnessGateError, ValueError) as error:  # its own run names what is missing
            hidden.append(f"its property modules could not be listed ({error})")
            continue
        for module in modules:
            collected = pytest_files.read_at_collection(module)
            looked_up.update(collected)
            if given_tests.is_pytest_module(_source(tree / module)):
                hidden += [f"{path}: {why}" for path in collected if (why := _pytest_reads(tree / path)) is not None]
        reached = oracle_imports.reach(tree, modules, import_paths)
        looked_up.update(reached.candidates)
        found = [*modules, *reached.modules, *([suite.fixture] if suite.fixture is not None else [])]
        for path in found:
            real = (tree / path).resolve()
            if real.is_relative_to(inside) and real != inside / path:
                files.add(real.relative_to(inside).as_posix())
            if path.endswith(".py"):
                source = _source(tree / path)
                if (why := oracle_imports.hidden_reach(source, _holds(tree, import_paths))) is not None:
                    hidden.append(f"{path}, {why}")
        files.update(found)
    base = trees[0]
    top_level = {
        import_prefix(root) + entry.name.split(".", 1)[0]
        for root in import_paths
        if (base / root).is_dir()
        for entry in (base / root).iterdir()
    }
    return Closure(
        frozenset(files),
        frozenset(looked_up),
        tuple(import_paths),
        frozenset(top_level),
        hidden[0] if hidden else None,
    )


def links_among(ownership: Ownership, trees: Sequence[Path]) -> frozenset[str]:
    """The changed paths that are symbolic links in any of `trees` (a `Closure`'s `links`)."""
    changed = (*ownership.impl, *ownership.oracle)
    return frozenset(path for path in changed if any((tree / path).is_symlink() for tree in trees))


def _holds(tree: Path, import_paths: Sequence[str]) -> Callable[[str], bool]:
    """Whether an import path of `tree` holds a dotted module name: a module, a package or a
    namespace directory (whose modules the suite's reading then follows)."""

    def holds(name: str) -> bool:
        relative = name.replace(".", "/")
        return any(
            (tree / f"{import_prefix(root)}{relative}{suffix}").exists()
            for root in import_paths
            for suffix in (".py", "/__init__.py", "")
        )

    return holds


def import_prefix(import_path: str) -> str:
    """What a path under an import path starts with (pure): "" for the repository's root."""
    return "" if import_path in ("", ".") else import_path.rstrip("/") + "/"


def _source(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _pytest_reads(path: Path) -> str | None:
    """Why a file pytest reads at collection, if it is there, hides what a pytest module reaches:
    a conftest.py or package __init__.py is code pytest runs first, an ini file with a pytest
    section may add import paths and plug-ins."""
    if not (path.is_file() or path.is_symlink()):
        return None
    if path.name in pytest_files.COLLECTION_FILES:
        return "code pytest runs at collection"
    section = dict(pytest_files.INI_FILES).get(path.name, b"")
    if section is None or section in _source(path):
        return "pytest's configuration (import paths and plug-ins)"
    return None


def _reaches(suite: Suite, closure: set[str], path: str) -> str | None:
    """How a changed path reaches a graph suite, or None: in its closure, under one of its
    source roots, or in the directory of a closure file or below it."""
    if path in closure:
        return "is in its closure"
    for root in suite.import_paths or (".",):
        if path.startswith(import_prefix(root)):
            return f"is under its source root {root}"
    if any(path.startswith(file.rpartition("/")[0] + "/") or "/" not in file for file in closure):
        return "is beside a file of its closure, or below its directory (package data)"
    return None


def reaching(suite: Suite, linked: Mapping[str, str]) -> Callable[[str], bool] | None:
    """Which changed implementation paths a graph suite's tree takes from the head: those that
    reach it (`_reaches`); all of them for a pyproject suite (None)."""
    if not suite.impl:
        return None
    closure = _closure(suite, linked)
    return lambda path: _reaches(suite, closure, path) is not None


def _closure(suite: Suite, linked: Mapping[str, str] | None) -> set[str]:
    """A graph suite's declared files, and the real files behind those that are symlinks."""
    declared = {
        path for path in (*suite.impl, suite.fixture, *suite.properties, *suite.oracle_paths) if path is not None
    }
    return declared | {real for real, link in (linked or {}).items() if link in declared}


def closure_only(suite: Suite, config: GateConfig, linked: Mapping[str, str]) -> Callable[[str], bool] | None:
    """Which base paths a suite's tree holds: a graph suite's closure (with what its links
    lead to), the freezes and the corpus, as `pants test` gives its sandbox; everything for a
    pyproject suite."""
    if not suite.impl:
        return None
    closure = _closure(suite, linked)
    kept = (config.freezes_dir.rstrip("/") + "/", config.corpus_dir.rstrip("/") + "/")
    return lambda path: path in closure or path.startswith(kept)


def symlinked_closure(tree: Path, config: GateConfig) -> dict[str, str]:
    """Real path -> closure path, for each graph suite's file that a symlink in the base
    tree leads to."""
    return real_locations(
        tree, sorted({path for suite in config.suites if suite.impl for path in _closure(suite, None)})
    )


def select_pyproject(
    repo: Path, landed: str, base_tree: Path, landed_tree: Path, config: GateConfig, ownership: Ownership
) -> dict[str, tuple[bool, str]]:
    """`pyproject_selection` of each pyproject suite, its closure read from the base's tree and,
    where that leaves it unaffected, from the landed tree too (written once, when first needed)."""
    selected = {}
    trees: list[Path] | None = None
    problem = ""
    links: frozenset[str] = frozenset()
    for suite in config.suites:
        if suite.impl:
            continue
        closure = pyproject_closure([base_tree], suite, config)
        if not pyproject_selection(closure, ownership)[0]:
            if trees is None:  # once, for every suite
                trees, problem = _written(repo, landed, landed_tree)
                links = links_among(ownership, [base_tree, *trees])
            if trees:
                closure = replace(pyproject_closure([base_tree, *trees], suite, config), links=links)
            else:
                closure = replace(closure, hidden=problem)
        selected[suite.name] = pyproject_selection(closure, ownership)
    return selected


def _written(repo: Path, revision: str, target: Path) -> tuple[list[Path], str]:
    """`[target]` with the revision's tree written there, or no tree and why it could not be."""
    try:
        git.export(repo, revision, target)
    except (WitnessGateError, OSError) as error:  # e.g. a link out of the tree, which blocks on its own
        return [], f"the landed tree could not be written ({error})"
    return [target], ""
