"""A property module in the worker: imported by path, its properties found and called.

A property is called as declared (`witness_gate.properties`); whatever it does other than
return True (False, a non-bool, any exception, `SystemExit` included) is a failure, and
the exception is kept as evidence (`protocol.failure_evidence`).
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from witness_gate import store
from witness_gate.canonical import sha256_hex
from witness_gate.errors import WitnessGateError
from witness_gate.properties import ASSERTION_ID, PropertySpec, declared_spec
from witness_gate.protocol import EvidenceKind, describe, failure_evidence


@dataclass(frozen=True)
class LoadedProperty:
    assertion_id: str
    function: Callable[..., Any]
    spec: PropertySpec
    path: str  # repository-relative
    sha256: str  # of the module's source bytes
    line: int

    def run(self, payload: Any, fixture: Callable[[], Any], random_seed: int, expect: str = "accept") -> Outcome:
        """One call under a `random` seed, as a replay makes it (`pytest_module.GivenTest.run`
        too); `fixture()` reads the pinned fixture, only for a property that takes it."""
        random.seed(random_seed)
        return evaluate(self, payload, fixture() if self.spec.takes_fixture else None, expect)


@dataclass(frozen=True)
class Outcome:
    passed: bool
    evidence: dict[str, Any] | None
    # A replayed `@given` case's input, as a digest (`pytest_module`): what the choices drew
    # in this interpreter. None where a payload is the input itself.
    drew: str | None = None


def evaluate(prop: LoadedProperty, payload: Any, fixture: Any = None, expect: str = "accept") -> Outcome:
    """Runs the property once; with expect="reject" it must refuse the payload."""
    outcome = _call(prop, payload, fixture)
    if expect == "accept":
        return outcome
    if outcome.passed:
        return Outcome(
            False,
            failure_evidence(
                EvidenceKind.ACCEPTED_REJECT, None, "property accepted a payload it must reject (weakened oracle?)"
            ),
        )
    return Outcome(True, None)


def _call(prop: LoadedProperty, payload: Any, fixture: Any) -> Outcome:
    try:
        result = prop.function(payload, fixture) if prop.spec.takes_fixture else prop.function(payload)
    except BaseException as error:  # fail closed: SystemExit and KeyboardInterrupt are failures too
        return Outcome(False, failure_evidence(EvidenceKind.EXCEPTION, type(error).__name__, describe(error)))
    if result is True:
        return Outcome(True, None)
    if result is False:
        return Outcome(False, failure_evidence(EvidenceKind.RETURNED_FALSE, None, "property returned False"))
    return Outcome(
        False,
        failure_evidence(
            EvidenceKind.RETURNED_NON_BOOL, None, f"property returned a {type(result).__name__}, not a bool"
        ),
    )


def module_name_for(relative_path: str) -> str:
    return "witness_gate_properties." + re.sub(r"\W", "_", relative_path.removesuffix(".py"))


def import_module(path: Path, relative_path: str) -> tuple[ModuleType, str]:
    """Imports one property module by path; returns it with its source digest."""
    source = store.read_regular_file(path, "property module")
    name = module_name_for(relative_path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WitnessGateError(f"{relative_path}: cannot import property module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        raise WitnessGateError(f"{relative_path}: line {error.lineno}: SyntaxError: {error.msg}") from None
    except BaseException as error:
        del sys.modules[name]
        hint = _IMPORT_HINT if isinstance(error, ImportError) else ""
        raise WitnessGateError(
            f"{relative_path}: importing the property module raised {type(error).__name__}: {describe(error)}{hint}"
        ) from None
    return module, sha256_hex(source)


_IMPORT_HINT = (
    " (is the code it imports on the import path? The CLI takes it from `import-paths` in pyproject.toml's "
    "[tool.witness-gate]; under Pants, list it in the target's `dependencies` or `oracle_dependencies`)"
)


def properties_of(module: ModuleType, relative_path: str, digest: str) -> list[LoadedProperty]:
    found = []
    for name, value in sorted(vars(module).items()):
        spec = declared_spec(value)
        if spec is None or getattr(value, "__module__", None) != module.__name__:
            continue
        if name != value.__name__ or not ASSERTION_ID.match(name):
            raise WitnessGateError(
                f"{relative_path}: property {name!r}: assertion id must be the function's own name and an identifier"
            )
        found.append(LoadedProperty(name, value, spec, relative_path, digest, value.__code__.co_firstlineno))
    return found


def add_import_paths(root: Path, import_paths: Sequence[str]) -> None:
    for entry in reversed(import_paths):
        path = str((root / entry).absolute())
        if path not in sys.path:
            sys.path.insert(0, path)
