"""Properties (the oracle): the `property` decorator, discovery, and evaluation.

A property takes one JSON payload (and optionally the pinned fixture as `fixture`)
and returns True. Anything else fails closed: False, a non-bool, or any exception,
`AssertionError` and `SystemExit` included; the exception is kept as evidence.
"""

from __future__ import annotations

import importlib.util
import inspect
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

_MARK = "__witness_gate_property__"
_MAX_MESSAGE = 2000
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
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
        setattr(function, _MARK, PropertySpec(payloads, tuple(examples), tuple(rejects), fixture_payloads, len(parameters) == 2))
        return function

    return decorate


@dataclass(frozen=True)
class LoadedProperty:
    assertion_id: str
    function: Callable[..., Any]
    spec: PropertySpec
    path: str  # repository-relative
    sha256: str  # of the module's source bytes
    line: int

    def run(self, payload: Any, fixture: Callable[[], Any], random_seed: int, expect: str = "accept") -> Outcome:
        """One call under a `random` seed, as a replay makes it (`given_tests.GivenTest.run`
        too); `fixture()` reads the pinned fixture, only for a property that takes it."""
        random.seed(random_seed)
        return evaluate(self, payload, fixture() if self.spec.takes_fixture else None, expect)


@dataclass(frozen=True)
class Outcome:
    passed: bool
    evidence: dict[str, Any] | None


def _clean_message(text: str) -> str:
    # Memory addresses differ from run to run; witnesses must not.
    text = _ADDRESS.sub("0x?", text)
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def describe(error: BaseException) -> str:
    """An exception's message as evidence holds it: no addresses, cut to length."""
    try:
        return _clean_message(str(error))
    except Exception:  # a __str__ that raises must not hide the failure
        return "<unprintable exception>"


# The kinds of a failing call that ended the worker rather than returning (a hang the
# runner killed, a process that died, a broken message channel): the runner, not the
# property, wrote the evidence.
ENDED_CALL_KINDS = ("timeout", "crashed", "protocol")


def failure_evidence(kind: str, exception_type: str | None, message: str) -> dict[str, Any]:
    return {"kind": kind, "exception_type": exception_type, "message": _clean_message(message)}


def evaluate(prop: LoadedProperty, payload: Any, fixture: Any = None, expect: str = "accept") -> Outcome:
    """Runs the property once; with expect="reject" it must refuse the payload."""
    outcome = _call(prop, payload, fixture)
    if expect == "accept":
        return outcome
    if outcome.passed:
        return Outcome(False, failure_evidence("accepted_reject", None, "property accepted a payload it must reject (weakened oracle?)"))
    return Outcome(True, None)


def _call(prop: LoadedProperty, payload: Any, fixture: Any) -> Outcome:
    try:
        result = prop.function(payload, fixture) if prop.spec.takes_fixture else prop.function(payload)
    except BaseException as error:  # fail closed: SystemExit and KeyboardInterrupt are failures too
        return Outcome(False, failure_evidence("exception", type(error).__name__, describe(error)))
    if result is True:
        return Outcome(True, None)
    if result is False:
        return Outcome(False, failure_evidence("returned_false", None, "property returned False"))
    return Outcome(False, failure_evidence("returned_non_bool", None, f"property returned a {type(result).__name__}, not a bool"))


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
        raise WitnessGateError(f"{relative_path}: importing the property module raised {type(error).__name__}: {describe(error)}{hint}") from None
    return module, sha256_hex(source)


_IMPORT_HINT = (
    " (is the code it imports on the import path? The CLI takes it from `import-paths` in pyproject.toml's "
    "[tool.witness-gate]; under Pants, list it in the target's `dependencies` or `oracle_dependencies`)"
)


def properties_of(module: ModuleType, relative_path: str, digest: str) -> list[LoadedProperty]:
    found = []
    for name, value in sorted(vars(module).items()):
        spec = getattr(value, _MARK, None)
        if not isinstance(spec, PropertySpec) or getattr(value, "__module__", None) != module.__name__:
            continue
        if name != value.__name__ or not ASSERTION_ID.match(name):
            raise WitnessGateError(f"{relative_path}: property {name!r}: assertion id must be the function's own name and an identifier")
        found.append(LoadedProperty(name, value, spec, relative_path, digest, value.__code__.co_firstlineno))
    return found


def add_import_paths(root: Path, import_paths: Sequence[str]) -> None:
    for entry in reversed(import_paths):
        path = str((root / entry).absolute())
        if path not in sys.path:
            sys.path.insert(0, path)


# pytest's own files beside its test modules: pytest loads them itself (`given_tests`); they
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
