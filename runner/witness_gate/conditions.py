"""Declared production conditions: the environment a suite's code meets in production.

A suite may declare a small matrix of conditions (`conditions` of a pyproject suite, a
`witness_properties` target or `--condition`), each a set of environment variables such
as `TZ=America/New_York` or `SHOP_REGION=US`, set on top of the workers' fixed
environment (`{}` is that environment itself). A condition is part of the input, like a
parameter: `check` searches the properties once under each, in the declared order, the
witness records the condition its failure was found under, and every replay of it runs
under that condition again. Without a declaration nothing changes: workers run with
`TZ=UTC`, `LC_ALL=C.UTF-8`, the hash secrets of the schedule and no variable of the caller's.

`PYTHONHASHSEED` may be declared too (`0` turns hash randomization off, as some services
run): it fixes the hash secret of that condition's search and replays, so hash order is
no longer a condition the gate varies there. Variables that decide what the interpreter
or a library loads, or where it looks files up (`PATH`, `HOME`, the other `PYTHON*`,
`LD_*`, `OPENSSL_*`, `GCONV_PATH`, `LOCPATH`, `TZDIR` and the like), cannot be declared:
they would run code of the tree in every worker, or test another condition than the one
named. A condition this machine cannot provide (a time zone it has no data for, a locale
it does not have) is refused by the worker before any user code runs: a silent fall-back
to UTC or to the C locale would test something else.
"""

from __future__ import annotations

import locale
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from witness_gate.errors import WitnessGateError

Condition = dict[str, str]
MAX_CONDITIONS = 16
MAX_VARIABLES = 32  # in one condition (the schemas' maxProperties)
_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}\Z")
_VALUE = re.compile(r"[\x21-\x7e]{1,256}\Z")  # printable ASCII without spaces: one word on a command line
# Variables that decide what the interpreter or a library loads (a provider module, a
# charset converter, a preloaded library) or where it looks files up: declared, they would
# run code of the tree in every worker, or quietly test another condition (TZDIR, LOCPATH).
_REFUSED_PREFIXES = (
    "PYTHON",
    "LD_",
    "DYLD_",
    "HYPOTHESIS_",
    "PEX_",
    "PIP_",
    "OPENSSL_",
    "SSL_",
    "GCONV",
    "GLIBC_",
    "MALLOC_",
    "LOCPATH",
    "NLSPATH",
    "TZDIR",
    "BASH_",
    "GIO_",
    "GTK_",
    "QT_",
    "XDG_",
    "TMP",
    "TEMP",
    "PERL",
    "RUBY",
    "NODE_",
    "JAVA",
)
_REFUSED = ("PATH", "HOME", "SHELL", "ENV", "IFS", "VIRTUAL_ENV")
_HASH_SEED = "PYTHONHASHSEED"
ZONEINFO = "/usr/share/zoneinfo"


def _name_problem(name: str) -> str | None:
    if not _NAME.match(name):
        return "a variable name is upper-case letters, digits and _"
    if name == _HASH_SEED:
        return None
    if name in _REFUSED or name.startswith(_REFUSED_PREFIXES):
        return (
            "it decides what the interpreter or a library loads, or where it looks files up, not a condition the "
            "code meets"
        )
    return None


def check_condition(value: Any, where: str) -> Condition:
    """One declared condition, or a refusal naming what is wrong (pure)."""
    if not isinstance(value, Mapping):
        raise WitnessGateError(
            f"{where}: a condition is a table of environment variables, "
            'e.g. {TZ = "America/New_York"} ({}: the defaults)'
        )
    if len(value) > MAX_VARIABLES:
        raise WitnessGateError(f"{where}: at most {MAX_VARIABLES} variables in one condition")
    condition = {}
    for name, text in value.items():
        if not isinstance(name, str) or (problem := _name_problem(name)) is not None:
            raise WitnessGateError(f"{where}: {name!r} cannot be declared: {problem or 'not a name'}")
        if not isinstance(text, str) or not _VALUE.match(text):
            raise WitnessGateError(f"{where}: {name}: the value must be 1 to 256 printable characters without spaces")
        if name == _HASH_SEED and not (text.isdigit() and int(text) < 1 << 32):
            raise WitnessGateError(f"{where}: {name}={text}: must be an integer from 0 to 4294967295")
        if name == "TZ" and (text.startswith((":", "/")) or ".." in text.split("/")):
            raise WitnessGateError(f"{where}: TZ={text}: name a time zone of {ZONEINFO}, e.g. America/New_York")
        condition[name] = text
    return dict(sorted(condition.items()))


def check_matrix(values: Iterable[Any], where: str) -> tuple[Condition, ...]:
    """A declared matrix: each condition checked, no two the same, at most `MAX_CONDITIONS` (pure)."""
    matrix = tuple(check_condition(value, f"{where}[{index}]") for index, value in enumerate(values))
    if len(matrix) > MAX_CONDITIONS:
        raise WitnessGateError(f"{where}: at most {MAX_CONDITIONS} conditions (each one is a search of its own)")
    for index, condition in enumerate(matrix):
        if condition in matrix[:index]:
            raise WitnessGateError(f"{where}[{index}]: {describe(condition)} is declared twice")
    return matrix


def parse(text: str, where: str) -> Condition:
    """`NAME=VALUE [NAME=VALUE ...]`, as `--condition` takes it (pure)."""
    assignments = {}
    for word in text.split():
        name, equals, value = word.partition("=")
        if not equals:
            raise WitnessGateError(f"{where}: {word!r}: write NAME=VALUE")
        if name in assignments:
            raise WitnessGateError(f"{where}: {name} is set twice in one condition")
        assignments[name] = value
    return check_condition(assignments, where)


def describe(condition: Mapping[str, str]) -> str:
    """A condition as the text output names it (pure)."""
    return " ".join(f"{name}={value}" for name, value in sorted(condition.items())) or "the default conditions"


def hash_secret(condition: Mapping[str, str], scheduled: int) -> int:
    """The hash secret a worker runs under: the declared one, else the schedule's (pure)."""
    return int(condition[_HASH_SEED]) if _HASH_SEED in condition else scheduled


def _locale_variable(name: str) -> bool:
    return name == "LANG" or name.startswith("LC_")


def apply(environment: Mapping[str, str], condition: Mapping[str, str]) -> dict[str, str]:
    """A worker's environment under a condition (pure): its variables over the fixed ones,
    without the fixed LC_ALL when it declares another locale variable (LC_ALL overrides
    them all); the hash secret is set by the caller, through `hash_secret`."""
    applied = dict(environment)
    if any(_locale_variable(name) for name in condition) and "LC_ALL" not in condition:
        applied.pop("LC_ALL", None)
    applied.update({name: value for name, value in condition.items() if name != _HASH_SEED})
    return applied


def machine_problem(condition: Mapping[str, str]) -> str | None:
    """Why this machine cannot provide a condition, or None. Run by the worker, in its own
    view of the system, before any user code."""
    zone = condition.get("TZ")
    if zone is not None and not os.path.isfile(os.path.join(ZONEINFO, zone)):
        return (
            f"condition TZ={zone}: no such time zone on this machine ({ZONEINFO}/{zone}); install tzdata or "
            "declare another"
        )
    named = [name for name in condition if _locale_variable(name)]
    if named:
        try:  # what a program that calls setlocale(LC_ALL, "") gets, then back to the start-up locale
            previous = locale.setlocale(locale.LC_ALL)
            locale.setlocale(locale.LC_ALL, "")
            locale.setlocale(locale.LC_ALL, previous)
        except locale.Error:
            shown = " ".join(f"{name}={condition[name]}" for name in named)
            return f"condition {shown}: this machine has no such locale (`locale -a` lists those it has)"
    return None
