"""The artifact formats: JSON Schema 2020-12 files from the repository's `schemas/`.

The files are the single source of truth; the package reaches them through its
`_schemas` link (installed and PEX builds carry copies of the same bytes).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from datetime import datetime
from importlib import resources
from typing import Any

from witness_gate.errors import WitnessGateError

NAMES = ("lock", "witness", "freeze", "report", "gate", "review", "suites")

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")


def schema_text(name: str) -> str:
    if name not in NAMES:
        raise WitnessGateError(f"unknown schema {name!r}: choose one of {', '.join(NAMES)}")
    return (resources.files("witness_gate") / "_schemas" / f"{name}.schema.json").read_text("utf-8")


@functools.cache
def _validator(name: str) -> Any:
    # jsonschema costs ~180 ms to import: only commands that read or write artifacts pay.
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    checker.checks("date-time")(_is_rfc3339)
    return jsonschema.Draft202012Validator(json.loads(schema_text(name)), format_checker=checker)


def prepare_in_background(name: str) -> threading.Thread:
    """Builds a validator on a thread, so importing jsonschema (~0.2 s) overlaps with work
    that releases the GIL, such as hashing a large fixture. Join it before validating."""
    thread = threading.Thread(target=_validator, args=(name,), daemon=True)
    thread.start()
    return thread


def _is_rfc3339(value: object) -> bool:
    if not isinstance(value, str):
        return True  # type mismatches are the "type" keyword's to report
    if not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _pointer(path: Any) -> str:
    return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in path)


def validate(name: str, instance: Any, source: str) -> None:
    """Raises a one-line error naming `source` and the JSON pointer of the first error."""
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        first = errors[0]
        message = first.message if len(first.message) <= 200 else first.message[:200] + "..."
        raise WitnessGateError(f"{source}: {_pointer(first.absolute_path)}: {message} (not a valid {name})")
