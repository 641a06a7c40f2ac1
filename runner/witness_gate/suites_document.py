"""The suites a build graph declares: the document `pants witness-gate-suites` prints.

Where a repository declares its gated targets in BUILD files, those declarations are the
only ones: `review` reads the base's graph from this document (schemas/suites.schema.json),
printed by the base's own Pants and plugin in a clean checkout of the base, and refuses
one read from any other commit. Pure: bytes and names in, configuration out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from witness_gate import conditions, ownership, schemas
from witness_gate.canonical import parse_json
from witness_gate.config import GateConfig, ResolveRequirements, Suite
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import BAZEL_GATED_TARGET, PANTS_GATED_TARGET
from witness_gate.paths import check_repo_path

GOAL = "pants witness-gate-suites --output-file=<file> ::"
BAZEL_GOAL = "bazel run @witness_gate//bazel:suites -- --output-file=<file>"


def graph_config(data: bytes, source: str, base: str, pyproject: GateConfig, role: str = "the base") -> GateConfig:
    """The review's whole configuration from the document: its suites, each with the
    ownership and source roots its target has under `pants test`, and the plugin's
    options. `[tool.witness-gate]` of the base's pyproject.toml plays no part (`pants test`
    never reads it either); suites declared there as well are refused."""
    document = parse_json(data, source)
    schemas.validate("suites", document, source)
    if document["commit"] != base:
        raise WitnessGateError(
            f"{source}: read from commit {document['commit']}, not {role} {base}: run `{GOAL}` in a clean checkout of "
            f"{role}"
        )
    if pyproject.suites:
        raise WitnessGateError(
            f"{source} and the base's pyproject.toml both declare suites ({_names(s.name for s in pyproject.suites)} "
            "there, "
            f"{_names(s['name'] for s in document['suites'])} in the graph): declare each suite once, in BUILD; "
            "remove [[tool.witness-gate.suites]]"
        )
    if not document["suites"]:
        raise WitnessGateError(
            f"{source}: the base's build graph declares no witness_properties target: nothing to gate"
        )
    names = [entry["name"] for entry in document["suites"]]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise WitnessGateError(
            f"{source}: two gated targets have the name {twice[0]!r}: review writes each suite to --out/<name>; "
            "rename one"
        )
    suites = tuple(_suite(entry, f"{source} suite {entry['name']}") for entry in document["suites"])
    impl, oracle = ownership.suite_sides(suites)
    return GateConfig(
        suites=suites,
        impl_prefixes=impl,
        oracle_prefixes=oracle,
        import_paths=tuple(sorted({root for suite in suites for root in suite.import_paths})) or (".",),
        freezes_dir=check_repo_path(document["freezes_dir"], source),
        corpus_dir=check_repo_path(document.get("corpus_dir", GateConfig.corpus_dir), source),
        per_change_search=document.get("per_change_search", False),
        max_freeze_hours=document["max_freeze_hours"],
        replay_timeout_seconds=float(document["replay_timeout_seconds"]),
        resolve=_resolve(document.get("requirements"), source),
    )


def _resolve(requirements: dict[str, Any] | None, source: str) -> ResolveRequirements | None:
    if requirements is None:
        return None
    return ResolveRequirements(check_repo_path(requirements["lockfile"], source), tuple(requirements["projects"]))


def _suite(entry: dict[str, Any], where: str) -> Suite:
    def paths(key: str) -> tuple[str, ...]:
        return tuple(check_repo_path(path, where) for path in entry[key])

    fixture = check_repo_path(entry["fixture"], where)
    properties = paths("properties")
    oracle = paths("oracle")
    missing = sorted({fixture, *properties} - set(oracle))
    if missing:
        raise WitnessGateError(
            f"{where}: {missing[0]} is the suite's fixture or property module but not among its oracle paths"
        )
    return Suite(
        entry["name"],
        fixture,
        entry["generator_version"],
        properties,
        entry["replays"],
        entry["max_examples"],
        impl=paths("impl"),
        oracle_paths=tuple(path for path in oracle if path not in {fixture, *properties}),
        oracle_globs=tuple(entry["oracle_globs"]),
        import_paths=paths("import_paths"),
        conditions=conditions.check_matrix(
            (conditions.parse(text, f"{where} conditions") for text in entry.get("conditions", [])),
            f"{where} conditions",
        ),
    )


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def declared_by(path: str, text: bytes) -> str | None:
    """The command that prints the suites a build file declares, or None when it declares
    none (pure): Pants' BUILD files name witness_properties, Bazel's witness_gate_test."""
    name = path.rsplit("/", 1)[-1]
    if name == "BUILD.bazel" or (name == "BUILD" and BAZEL_GATED_TARGET in text and PANTS_GATED_TARGET not in text):
        return BAZEL_GOAL if BAZEL_GATED_TARGET in text else None
    return GOAL if PANTS_GATED_TARGET in text else None
