"""Properties (the oracle): the `property` decorator and where property modules are.

A property takes one JSON payload (and optionally the pinned fixture as `fixture`)
and returns True. Anything else fails closed: False, a non-bool, or any exception,
`AssertionError` and `SystemExit` included; the exception is kept as evidence. Only a
worker imports a property module and calls its properties (`worker.property_module`);
what is here runs no user code.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate.errors import WitnessGateError

_MARK = "__witness_gate_property__"
# A property function's name; a pytest test's assertion id is its node id (`given_tests`).
ASSERTION_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")


@dataclass(frozen=True)
class PropertySpec:
    payloads: Any
    examples: tuple[Any, ...]
    rejects: tuple[Any, ...]
    fixture_payloads: bool
    takes_fixture: bool


def property(
    *, payloads: Any, examples: Sequence[Any] = (), rejects: Sequence[Any] = (), fixture_payloads: bool = False
) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    """Declares a property. `payloads` is a Hypothesis strategy of JSON payloads;
    `examples` are payloads it must accept and `rejects` payloads it must reject,
    both checked on every run before any random draw. Keep at least one reject: a
    generator that emits only valid payloads never exercises the failing branch,
    and a weakened checker that accepts it turns the run red. With
    `fixture_payloads=True`, each element of the pinned fixture (a JSON array of
    objects) is checked as a payload it must accept, too."""

    def decorate(function: Callable[..., bool]) -> Callable[..., bool]:
        parameters = list(inspect.signature(function).parameters)
        if len(parameters) not in (1, 2) or (len(parameters) == 2 and parameters[1] != "fixture"):
            raise TypeError(
                f"witness_gate.property {function.__qualname__}: take (payload) or (payload, fixture), "
                f"not ({', '.join(parameters)})"
            )
        setattr(
            function,
            _MARK,
            PropertySpec(payloads, tuple(examples), tuple(rejects), fixture_payloads, len(parameters) == 2),
        )
        return function

    return decorate


def declared_spec(value: Any) -> PropertySpec | None:
    """How `value` was declared a property, or None if it was not."""
    spec = getattr(value, _MARK, None)
    return spec if isinstance(spec, PropertySpec) else None


# pytest's own files beside its test modules: pytest loads them itself (`worker.pytest_module`); they
# are oracle like the modules, never modules to check.
PYTEST_SUPPORT_FILES = ("conftest.py", "__init__.py")


def property_files(entries: Sequence[Path]) -> tuple[Path, ...]:
    """The property modules named by `entries`: each a module, or a directory of them."""
    files = (file for entry in entries for file in (module_files(entry) if entry.is_dir() else [entry]))
    return tuple(file for file in files if file.name not in PYTEST_SUPPORT_FILES)


def module_files(directory: Path) -> list[Path]:
    """The `*.py` property modules under `directory`, sorted; each a plain file inside it."""
    if directory.is_symlink() or not directory.is_dir():
        raise WitnessGateError(f"{directory}: properties directory not found (or not a plain directory)")
    real_directory = directory.resolve()
    files = []
    for path in sorted(directory.rglob("*.py")):
        if "__pycache__" in path.parts or path.name in PYTEST_SUPPORT_FILES:
            continue
        if path.is_symlink() or not path.resolve().is_relative_to(real_directory):
            raise WitnessGateError(f"{path}: property modules must be plain files inside {directory}")
        files.append(path)
    if not files:
        raise WitnessGateError(f"{directory}: no property module (*.py) found: there is nothing to check")
    return files
