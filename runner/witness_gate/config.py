"""The gate's local conventions: `[tool.witness-gate]` in pyproject.toml, then flags."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from witness_gate import conditions
from witness_gate.errors import WitnessGateError
from witness_gate.paths import check_repo_path


@dataclass(frozen=True)
class Suite:
    """One gated suite for `review`: a fixture and the property modules checked against it."""

    name: str
    fixture: str | None  # None: declared without fixture data (`fixture = false`), which pins nothing
    generator_version: int
    properties: tuple[str, ...]  # property modules or directories of them
    replays: int = 5
    max_examples: int = 100
    # Modules (or directories) the properties import that are oracle too, e.g. strategies:
    # reviewed with the oracle, taken from the base, never from the patch.
    oracle_dependencies: tuple[str, ...] = ()
    # From a build graph only (suites_document.py): the target's own ownership and source
    # roots, as `pants test` derives them; empty for a pyproject suite, which uses the
    # repository-wide prefixes and import paths.
    impl: tuple[str, ...] = ()
    oracle_paths: tuple[str, ...] = ()
    oracle_globs: tuple[
        str, ...
    ] = ()  # a path they match that no entry owns is oracle (a property module the head adds)
    import_paths: tuple[str, ...] = ()
    conditions: tuple[dict[str, str], ...] = ()  # declared production conditions (`conditions`)


@dataclass(frozen=True)
class ResolveRequirements:
    """What a build graph's suites need from its resolve (`suites_document`): the resolve's
    lockfile, and the third-party projects their closures require."""

    lockfile: str
    projects: tuple[str, ...]


@dataclass(frozen=True)
class GateConfig:
    impl_prefixes: tuple[str, ...] = ("src/",)
    oracle_prefixes: tuple[str, ...] = ("tests/properties/",)
    generated_oracle_paths: tuple[str, ...] = ()
    import_paths: tuple[str, ...] = (".",)
    max_freeze_hours: int = 168
    replay_timeout_seconds: float = 60.0
    freezes_dir: str = ".witness-gate/freezes"
    corpus_dir: str = ".witness-gate/corpus"  # retained witnesses every run replays (`corpus`)
    # `review` searches seeds from a random salt after the fixed schedule (`lock.seed_schedule`).
    per_change_search: bool = False
    # A pip requirements file of the base, every line pinned by hash: the code's third-party
    # packages, which `review` installs outside the sandbox and shows its workers read-only.
    requirements: str | None = None
    # The same for a build graph's suites: the projects they require, pinned by its lockfile.
    resolve: ResolveRequirements | None = None
    suites: tuple[Suite, ...] = ()


_LIST_KEYS = {
    "impl-prefixes": "impl_prefixes",
    "oracle-prefixes": "oracle_prefixes",
    "generated-oracle-paths": "generated_oracle_paths",
    "import-paths": "import_paths",
}
_NUMBER_KEYS = {
    "max-freeze-hours": ("max_freeze_hours", int),
    "replay-timeout-seconds": ("replay_timeout_seconds", float),
}
_SUITE_KEYS = {
    "name": str,
    "fixture": str,
    "generator-version": int,
    "properties": list,
    "replays": int,
    "max-examples": int,
    "oracle-dependencies": list,
    "conditions": list,
}


# The same names a build graph's suites have (schemas/suites.schema.json): one folder each.
_SUITE_NAME = re.compile(r"[A-Za-z0-9_.@=+-]{1,255}\Z")


def load_config(root: Path, **overrides: Any) -> GateConfig:
    """Reads `root/pyproject.toml` (if any); non-empty overrides replace its values."""
    config = _from_pyproject(root / "pyproject.toml")
    config = replace(config, **{k: v for k, v in overrides.items() if v})
    _check(config, "witness-gate configuration")
    return config


def _from_pyproject(path: Path) -> GateConfig:
    if not path.is_file():
        return GateConfig()
    return parse_config(path.read_bytes(), str(path))


def parse_config(data: bytes, where: str) -> GateConfig:
    """`[tool.witness-gate]` of a pyproject.toml's bytes (from a file, or a git object)."""
    source = f"{where} [tool.witness-gate]"
    try:
        table = tomllib.loads(data.decode("utf-8")).get("tool", {}).get("witness-gate", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise WitnessGateError(f"{where}: invalid TOML: {error}") from None
    if not isinstance(table, dict):
        raise WitnessGateError(f"{source}: must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise WitnessGateError(f"{source}: {key} must be a list of strings")
            values[_LIST_KEYS[key]] = tuple(value)
        elif key in _NUMBER_KEYS:
            field, kind = _NUMBER_KEYS[key]
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or (kind is int and not isinstance(value, int))
            ):
                raise WitnessGateError(f"{source}: {key} must be a {kind.__name__}")
            values[field] = kind(value)
        elif key in ("freezes-dir", "corpus-dir"):
            if not isinstance(value, str):
                raise WitnessGateError(f"{source}: {key} must be a string")
            values[key.replace("-", "_")] = check_repo_path(value.rstrip("/"), source)
        elif key == "requirements":
            if not isinstance(value, str):
                raise WitnessGateError(f"{source}: requirements must be a string (a requirements file, pinned by hash)")
            values["requirements"] = check_repo_path(value, source)
        elif key == "per-change-search":
            if not isinstance(value, bool):
                raise WitnessGateError(f"{source}: per-change-search must be true or false")
            values["per_change_search"] = value
        elif key == "suites":
            values["suites"] = _suites(value, source)
        else:
            known = ", ".join(
                sorted(
                    [
                        *_LIST_KEYS,
                        *_NUMBER_KEYS,
                        "freezes-dir",
                        "corpus-dir",
                        "per-change-search",
                        "requirements",
                        "suites",
                    ]
                )
            )
            raise WitnessGateError(f"{source}: unknown key {key!r} (known: {known})")
    config = replace(GateConfig(), **values)
    _check(config, source)
    return config


def _suites(value: Any, source: str) -> tuple[Suite, ...]:
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise WitnessGateError(f"{source}: suites must be an array of tables ([[tool.witness-gate.suites]])")
    suites = []
    for index, entry in enumerate(value):
        where = f"{source} suites[{index}]"
        unknown = sorted(set(entry) - set(_SUITE_KEYS))
        missing = sorted({"name", "fixture", "generator-version", "properties"} - set(entry))
        if unknown or missing:
            raise WitnessGateError(
                f"{where}: {'unknown key ' + repr(unknown[0]) if unknown else 'missing key ' + repr(missing[0])}"
            )
        for key, kind in _SUITE_KEYS.items():
            if key == "fixture" and entry.get(key) is False:
                continue  # declared without fixture data (a pytest module reads its own files, or none)
            if key in entry and (not isinstance(entry[key], kind) or isinstance(entry[key], bool)):
                kind_name = "path, or false for a suite without fixture data" if key == "fixture" else kind.__name__
                raise WitnessGateError(f"{where}: {key} must be a {kind_name}")
        if not _SUITE_NAME.match(entry["name"]) or entry["name"] in (".", ".."):
            raise WitnessGateError(
                f"{where}: name {entry['name']!r} must be letters, digits and . _ - + = @ (review makes it a folder "
                "under --out)"
            )
        if not all(isinstance(item, str) for item in entry["properties"]) or not entry["properties"]:
            raise WitnessGateError(f"{where}: properties must be a non-empty list of paths")
        if not all(isinstance(item, str) for item in entry.get("oracle-dependencies", [])):
            raise WitnessGateError(f"{where}: oracle-dependencies must be a list of paths")
        suite = Suite(
            entry["name"],
            None if entry["fixture"] is False else check_repo_path(entry["fixture"], where),
            entry["generator-version"],
            tuple(check_repo_path(item.rstrip("/"), where) for item in entry["properties"]),
            entry.get("replays", 5),
            entry.get("max-examples", 100),
            tuple(check_repo_path(item.rstrip("/"), where) for item in entry.get("oracle-dependencies", [])),
            conditions=conditions.check_matrix(entry.get("conditions", []), f"{where} conditions"),
        )
        suites.append(suite)
    if len({suite.name for suite in suites}) != len(suites):
        raise WitnessGateError(f"{source}: suite names must be unique")
    return tuple(suites)


def _check(config: GateConfig, source: str) -> None:
    for entries in (config.impl_prefixes, config.oracle_prefixes, config.generated_oracle_paths):
        for entry in entries:
            check_repo_path(entry, source)
    for entry in config.import_paths:
        if entry != ".":
            check_repo_path(entry, source)
    suite_oracle = {
        path
        for suite in config.suites
        for path in (suite.fixture, *suite.properties, *suite.oracle_dependencies)
        if path is not None
    }
    clash = {prefix.rstrip("/") for prefix in config.impl_prefixes} & (
        {entry.rstrip("/") for entry in (*config.oracle_prefixes, *config.generated_oracle_paths)} | suite_oracle
    )
    if clash:
        raise WitnessGateError(f"{source}: {sorted(clash)[0]!r} is declared both implementation and oracle")
    if not config.impl_prefixes or not config.oracle_prefixes:
        raise WitnessGateError(f"{source}: impl-prefixes and oracle-prefixes must not be empty")
    if not 1 <= config.max_freeze_hours <= 24 * 365:
        raise WitnessGateError(f"{source}: max-freeze-hours must be between 1 and 8760")
    if not 0 < config.replay_timeout_seconds <= 3600:
        raise WitnessGateError(f"{source}: replay-timeout-seconds must be in (0, 3600]")
