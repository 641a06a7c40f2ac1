"""Implementation or oracle? The one rule, for every path the gate judges (spec section 5).

The implementation is the code under test; the oracle is what judges it: the property
modules, the fixtures, the gate's own controls, the freezes, and whatever else decides a
verdict. A change to the oracle gets a review of its own; a change to both is a mixed
edit. `review`, `gate`, `codeowners` and the suites document (`suites_document`) all ask here.

Entries are local convention: one ending in "/" owns a directory, any other owns that
exact path (or the directory of that name). When entries nest (impl "src/", oracle
"src/properties/"), the longest match owns the path. Pure: paths and declarations in,
owners out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from witness_gate import pytest_files
from witness_gate.config import GateConfig, Suite
from witness_gate.errors import WitnessGateError
from witness_gate.paths import glob_matches

Owner = Literal["impl", "oracle"]


# The gate's own controls, owned like oracle paths: whoever edits them edits the check.
# Bazel's: `.bazelignore` can hide a gated package from `bazel test //...`, and `bazel/` holds
# the rules that run the gate (defs.bzl, the test script, the runner and changed-list flags).
# CODEOWNERS, in each place GitHub reads it: who may approve an oracle review (`approvals`).
CONTROL_PATHS = (
    "pyproject.toml",
    "pants.toml",
    ".pants.rc",
    "pants",
    "BUILD",
    "WORKSPACE",
    ".bazelrc",
    ".bazelignore",
    "bazel/",
    ".ci/",
    ".github/",
    "CODEOWNERS",
    "docs/CODEOWNERS",
)
# A build file anywhere that declares (or declared) a gated target is a control too: it says
# what `pants test` / `bazel test` gate, and so is a Starlark file that defines or wraps the
# gated rules. Other build files are the implementation's business.
_BUILD_FILE_NAMES = ("BUILD", "BUILD.pants", "BUILD.bazel")
STARLARK_SUFFIX = ".bzl"
# Attributes decide how a checkout materializes files (filters, encodings, export-ignore):
# the review writes raw blobs, but every other consumer of the tree obeys them.
_ATTRIBUTE_FILES = (".gitattributes",)
# What `pants witness-gate-suites` and `@witness_gate//bazel:suites` read: a build file naming one of these
# target types declares a suite only that document can describe (`suites_document`).
PANTS_GATED_TARGET = b"witness_properties"
BAZEL_GATED_TARGET = b"witness_gate_test"
_GATED_TARGET_TYPES = (PANTS_GATED_TARGET, b"witness_fixture", BAZEL_GATED_TARGET)


def _matches(path: str, entry: str) -> bool:
    if entry.endswith("/"):
        return path.startswith(entry)
    return path == entry or path.startswith(entry + "/")


def owner(
    path: str,
    impl_prefixes: Sequence[str],
    oracle_prefixes: Sequence[str],
    generated_oracle: Sequence[str] = (),
) -> Owner | None:
    best: tuple[int, Owner] | None = None
    for side, entries in (("impl", impl_prefixes), ("oracle", oracle_prefixes), ("oracle", generated_oracle)):
        for entry in entries:
            if _matches(path, entry) and (best is None or len(entry) > best[0]):
                best = (len(entry), side)  # type: ignore[assignment]
    return None if best is None else best[1]


def split_paths(
    paths: Iterable[str],
    impl_prefixes: Sequence[str],
    oracle_prefixes: Sequence[str],
    generated_oracle: Sequence[str] = (),
) -> tuple[bool, bool]:
    """(implementation changed, oracle changed) for a changed-file list.

    Linear in the paths, and mostly at C speed: a path an entry owns starts with the
    entry's text ("d/" owns "d/...", "e" owns "e" and "e/..."), so one regex scan of the
    joined list finds the candidates of each side, and the longest-match `owner` judges
    each candidate until one belongs to that side."""
    paths = list(paths)
    text = "\n".join(paths)
    if text.count("\n") != max(len(paths) - 1, 0):  # a path with a line break: judge one by one
        sides = {owner(path, impl_prefixes, oracle_prefixes, generated_oracle) for path in paths}
        return "impl" in sides, "oracle" in sides

    framed = "\n" + text + "\n"

    def present(side: Owner, entries: Sequence[str]) -> bool:
        for entry in entries:
            needle = "\n" + entry
            start = framed.find(needle)
            while start >= 0:
                end = framed.find("\n", start + 1)
                if owner(framed[start + 1 : end], impl_prefixes, oracle_prefixes, generated_oracle) == side:
                    return True
                start = framed.find(needle, end)
        return False

    return present("impl", impl_prefixes), present("oracle", (*oracle_prefixes, *generated_oracle))


@dataclass(frozen=True)
class Ownership:
    """Who owns each changed path, by the base's declarations."""

    impl: tuple[str, ...]
    oracle: dict[str, str]  # path -> its owner ("suite <name>", "gate controls", "freezes")


def oracle_entries(config: GateConfig) -> list[tuple[str, str]]:
    """(prefix or path, owner) of every oracle entry the base declares; the most specific
    owner is named, and a suite before a prefix of the same path."""
    entries = []
    for suite in config.suites:
        entries += [(suite.fixture, f"suite {suite.name} (fixture)")] if suite.fixture is not None else []
        entries += [(path, f"suite {suite.name} (properties)") for path in suite.properties]
        entries += [(path, f"suite {suite.name} (oracle dependencies)") for path in suite.oracle_dependencies]
        entries += [(path, f"suite {suite.name} (oracle paths)") for path in suite.oracle_paths]
    entries += [(prefix, "oracle prefix") for prefix in (*config.oracle_prefixes, *config.generated_oracle_paths)]
    entries.append((config.freezes_dir.rstrip("/") + "/", "freezes"))
    entries.append((config.corpus_dir.rstrip("/") + "/", "corpus"))
    entries += [(path, "gate controls") for path in CONTROL_PATHS]
    entries += [(path, "gate controls (the code's dependencies)") for path in dependency_files(config)]
    return entries


def dependency_files(config: GateConfig) -> tuple[str, ...]:
    """The file the base pins its code's third-party packages in, if any: a requirements
    file (`requirements`) or the build graph's lockfile."""
    lockfile = config.resolve.lockfile if config.resolve is not None else None
    return tuple(path for path in (config.requirements, lockfile) if path is not None)


def pytest_entries(config: GateConfig) -> list[tuple[str, str]]:
    """(path, owner) of each file pytest may read when it collects a suite's property modules
    (`pytest_files`: ini files, conftest files and `__init__.py` files on the way from the
    root), declared or not: they configure the check, so they are oracle, but for an
    `__init__.py` inside the implementation prefixes (the package's own code)."""
    entries: dict[str, str] = {}
    for suite in config.suites:
        for path in suite.properties:
            for read in pytest_files.read_at_collection(path):
                if read.rsplit("/", 1)[-1] == "__init__.py" and owner(read, config.impl_prefixes, ()) == "impl":
                    continue
                entries.setdefault(read, f"suite {suite.name} (read by pytest)")
    return sorted(entries.items())


def own(
    paths: list[str], config: GateConfig, symlinked: dict[str, str], gated_build_files: frozenset[str] = frozenset()
) -> Ownership:
    """Splits the changed paths: oracle by every entry above (anything an oracle path
    reaches through a symlink too, a build file that declares gated targets, an attributes
    file, a path no entry owns that a build-graph suite's oracle glob matches), everything
    else implementation: a data file or a module outside the implementation prefixes is
    still something the head's code may read (pure)."""
    entries = [*oracle_entries(config), *pytest_entries(config)]
    impl, oracle = [], {}
    prefixes = [entry for entry, _ in entries]
    for path in paths:
        linked = [(real, link) for real, link in symlinked.items() if path == real or path.startswith(real + "/")]
        name = path.rsplit("/", 1)[-1]
        if linked:
            oracle[path] = f"{max(linked)[1]} (through a symlink)"
        elif path in gated_build_files:
            oracle[path] = "gate controls (declares gated targets)"
        elif name in _ATTRIBUTE_FILES:
            oracle[path] = "gate controls (git attributes)"
        elif (side := owner(path, config.impl_prefixes, prefixes)) == "oracle":
            found = [
                (entry, who)
                for entry, who in entries
                if path == entry.rstrip("/") or path.startswith(entry.rstrip("/") + "/")
            ]
            oracle[path] = max(found, key=lambda pair: len(pair[0].rstrip("/")))[1]
        elif side is None and (
            matched := [(s.name, p) for s in config.suites for p in s.oracle_globs if glob_matches(path, p)]
        ):
            oracle[path] = f"suite {matched[0][0]} (matches {matched[0][1]})"
        else:  # implementation, or declared by no one: the code under test may read it, so it comes from the head
            impl.append(path)
    return Ownership(tuple(impl), oracle)


def is_build_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in _BUILD_FILE_NAMES or name.endswith(STARLARK_SUFFIX)


def declares_gated_targets(path: str, text: bytes) -> bool:
    """Whether a build (or .bzl) file names a gated target type (pure)."""
    return is_build_file(path) and any(kind in text for kind in _GATED_TARGET_TYPES)


def with_every_oracle_entry(config: GateConfig) -> GateConfig:
    """`config` with every oracle entry of the base among its oracle prefixes, controls and
    freezes included: what the gate judges a review's suite with."""
    extra = tuple(
        entry for entry, _ in (*oracle_entries(config), *pytest_entries(config)) if entry not in config.oracle_prefixes
    )
    return replace(config, oracle_prefixes=(*config.oracle_prefixes, *extra))


def suite_sides(suites: Sequence[Suite]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(implementation, oracle) paths of the suites a build graph declares, each sorted: a
    file one target tests and another's oracle reads is the oracle's, the stricter owner."""
    # A build graph's suite always has its fixture (schemas/suites.schema.json).
    oracle = {
        path for suite in suites for path in (suite.fixture, *suite.properties, *suite.oracle_paths) if path is not None
    }
    impl = {path for suite in suites for path in suite.impl} - oracle
    return tuple(sorted(impl)), tuple(sorted(oracle))


def exactly_listed(
    config: GateConfig, impl: Sequence[str], oracle: Sequence[str], impl_source: str, oracle_source: str
) -> GateConfig:
    """`config` owning exactly the listed paths, e.g. derived from a build graph; a path on
    both sides is refused."""
    both = sorted(set(impl) & set(oracle))
    if both:
        raise WitnessGateError(
            f"{impl_source}: {both[0]!r} is listed as implementation and in {oracle_source} as oracle"
        )
    return replace(config, impl_prefixes=tuple(impl), oracle_prefixes=tuple(oracle), generated_oracle_paths=())
