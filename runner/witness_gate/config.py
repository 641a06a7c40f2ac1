"""The gate's local conventions: `[tool.witness-gate]` in pyproject.toml, then flags."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from witness_gate.errors import WitnessGateError
from witness_gate.paths import check_repo_path


@dataclass(frozen=True)
class GateConfig:
    impl_prefixes: tuple[str, ...] = ("src/",)
    oracle_prefixes: tuple[str, ...] = ("tests/properties/",)
    generated_oracle_paths: tuple[str, ...] = ()
    import_paths: tuple[str, ...] = (".",)
    max_freeze_hours: int = 168
    replay_timeout_seconds: float = 60.0


_LIST_KEYS = {
    "impl-prefixes": "impl_prefixes",
    "oracle-prefixes": "oracle_prefixes",
    "generated-oracle-paths": "generated_oracle_paths",
    "import-paths": "import_paths",
}
_NUMBER_KEYS = {"max-freeze-hours": ("max_freeze_hours", int), "replay-timeout-seconds": ("replay_timeout_seconds", float)}


def load_config(root: Path, **overrides: Any) -> GateConfig:
    """Reads `root/pyproject.toml` (if any); non-empty overrides replace its values."""
    config = _from_pyproject(root / "pyproject.toml")
    config = replace(config, **{k: v for k, v in overrides.items() if v})
    _check(config, "witness-gate configuration")
    return config


def _from_pyproject(path: Path) -> GateConfig:
    if not path.is_file():
        return GateConfig()
    source = f"{path} [tool.witness-gate]"
    try:
        table = tomllib.loads(path.read_text("utf-8")).get("tool", {}).get("witness-gate", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise WitnessGateError(f"{path}: invalid TOML: {error}") from None
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
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
                raise WitnessGateError(f"{source}: {key} must be a {kind.__name__}")
            values[field] = kind(value)
        else:
            known = ", ".join(sorted([*_LIST_KEYS, *_NUMBER_KEYS]))
            raise WitnessGateError(f"{source}: unknown key {key!r} (known: {known})")
    config = replace(GateConfig(), **values)
    _check(config, source)
    return config


def _check(config: GateConfig, source: str) -> None:
    for entries in (config.impl_prefixes, config.oracle_prefixes, config.generated_oracle_paths):
        for entry in entries:
            check_repo_path(entry, source)
    for entry in config.import_paths:
        if entry != ".":
            check_repo_path(entry, source)
    clash = set(config.impl_prefixes) & (set(config.oracle_prefixes) | set(config.generated_oracle_paths))
    if clash:
        raise WitnessGateError(f"{source}: {sorted(clash)[0]!r} is declared both implementation and oracle")
    if not config.impl_prefixes or not config.oracle_prefixes:
        raise WitnessGateError(f"{source}: impl-prefixes and oracle-prefixes must not be empty")
    if not 1 <= config.max_freeze_hours <= 24 * 365:
        raise WitnessGateError(f"{source}: max-freeze-hours must be between 1 and 8760")
    if not 0 < config.replay_timeout_seconds <= 3600:
        raise WitnessGateError(f"{source}: replay-timeout-seconds must be in (0, 3600]")
