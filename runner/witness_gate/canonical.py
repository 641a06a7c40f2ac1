"""Canonical JSON and digests: the byte-level identity of payloads and artifacts."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from witness_gate.errors import WitnessGateError

_HASH_CHUNK = 1 << 20


class NotPlainJSON(WitnessGateError):
    """A value that JSON cannot carry without a silent conversion."""


def ensure_plain_json(value: Any, where: str = "$") -> None:
    """Refuse anything but dict (str keys), list, str, int, finite float, bool, None.

    Tuples, sets, bytes, NaN and non-string keys would each survive `json.dumps` only
    by being converted or by producing non-standard JSON, so the hash would not name
    the value the property saw.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotPlainJSON(f"{where}: {value!r} is not representable in JSON")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            ensure_plain_json(item, f"{where}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotPlainJSON(f"{where}: key {key!r} is a {type(key).__name__}, not a string")
            ensure_plain_json(item, f"{where}[{key!r}]")
        return
    raise NotPlainJSON(f"{where}: a {type(value).__name__} is not plain JSON")


def canonical_bytes(value: Any) -> bytes:
    """Sorted keys, no whitespace, ASCII escapes: the spec's `witness_hash` encoding."""
    ensure_plain_json(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def payload_hash(payload: Any) -> str:
    return sha256_hex(canonical_bytes(payload))


def artifact_bytes(record: Any) -> bytes:
    """The on-disk form of every artifact: indented, sorted, newline-terminated."""
    ensure_plain_json(record)
    return (json.dumps(record, indent=2, sort_keys=True, allow_nan=False) + "\n").encode("ascii")


def file_sha256(path: Path) -> tuple[str, int]:
    """Streams the file through SHA-256; returns (hex digest, size in bytes)."""
    digest = hashlib.sha256()
    size = 0
    buffer = bytearray(_HASH_CHUNK)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while count := handle.readinto(buffer):
            digest.update(view[:count])
            size += count
    return digest.hexdigest(), size


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_json(data: bytes, source: str) -> Any:
    """Strict JSON: UTF-8 only, no NaN/Infinity, no duplicate keys; one-line errors."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WitnessGateError(f"{source}: not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(
            text,
            parse_constant=_reject_constant,
            object_pairs_hook=_reject_duplicate_keys,
        )
    except json.JSONDecodeError as error:
        raise WitnessGateError(
            f"{source}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except (ValueError, RecursionError) as error:
        raise WitnessGateError(f"{source}: invalid JSON: {error}") from None
