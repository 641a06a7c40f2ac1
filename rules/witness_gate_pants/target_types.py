"""The witness-gate target types: a pinned fixture, and the properties checked against it.

Ownership is declared by construction: a `witness_properties` target's sources and its
fixture are the oracle; the first-party code it depends on is the implementation.
Extra paths can be added on either side; declarations that overlap are refused when the
BUILD file is parsed, because a path owned by both sides would make every edit to it a
mixed edit (or, worse, let one side hide behind the other).
"""

from __future__ import annotations

import fnmatch
from typing import Iterable, Optional

from pants.engine.addresses import Address
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    Dependencies,
    IntField,
    InvalidFieldException,
    MultipleSourcesField,
    SingleSourceField,
    SpecialCasedDependencies,
    StringField,
    StringSequenceField,
    Target,
    ValidNumbers,
)
from pants.util.strutil import help_text

_GLOB_CHARS = frozenset("*?[")


class WitnessFixtureSourceField(SingleSourceField):
    required = True
    help = help_text(
        """
        The fixture file, pinned by its bytes: every run hashes it (sha256) and derives the
        Hypothesis seed schedule from that digest and `generator_version`. A property may take
        it as its `fixture` parameter (parsed as JSON).
        """
    )


class GeneratorVersionField(IntField):
    alias = "generator_version"
    required = True
    value: int
    valid_numbers = ValidNumbers.positive_and_zero
    help = "The reviewed version of the payload generators; part of the pin. Bump it when a strategy changes."


class WitnessFixtureTarget(Target):
    alias = "witness_fixture"
    core_fields = (*COMMON_TARGET_FIELDS, WitnessFixtureSourceField, GeneratorVersionField)
    help = help_text(
        """
        A fixture for witness-gate properties: one file pinned by its bytes, with the version of
        the generators that draw payloads around it. Referenced by `witness_properties(fixture=...)`.
        The fixture is an oracle path: changing it changes what the properties check against.
        """
    )


class WitnessPropertiesSourcesField(MultipleSourcesField):
    required = True
    expected_file_extensions = (".py",)
    help = help_text(
        """
        The property modules (the oracle). Each defines functions decorated with
        `@witness_gate.property(payloads=<Hypothesis strategy>, ...)`. These files are oracle
        paths by construction.
        """
    )


class WitnessPropertiesFixtureField(StringField):
    alias = "fixture"
    required = True
    value: str
    help = "Address of the `witness_fixture` target these properties are checked against, e.g. `:orders_fixture`."


class WitnessPropertiesDependenciesField(Dependencies):
    help = help_text(
        """
        The code under test: ordinary `python_sources` (and their requirements) that the property
        modules import. Their first-party files, transitively, are the implementation paths of
        this target; they reach the sandbox under their source roots, and their requirements are
        added to the runner. Property modules are not inferred: list what they import here (or in
        `oracle_dependencies`, for the oracle's own helpers).
        """
    )


class OracleDependenciesField(SpecialCasedDependencies):
    alias = "oracle_dependencies"
    help = help_text(
        """
        Helper code of the oracle that the property modules import, e.g. a `python_sources` target
        of shared Hypothesis strategies. Their own sources are oracle paths (reviewed with the
        properties, never implementation, even when `dependencies` reaches them too); they and
        what they depend on are importable in the sandbox.
        """
    )


class _BoundedIntField(IntField):
    valid_numbers = ValidNumbers.positive_only
    maximum: int

    @classmethod
    def compute_value(cls, raw_value: Optional[int], address: Address) -> int:
        value = super().compute_value(raw_value, address)
        assert value is not None  # each bounded field has a default
        if value > cls.maximum:
            raise InvalidFieldException(
                f"The `{cls.alias}` field in target {address} must be at most {cls.maximum}, got {value}."
            )
        return value


class ReplaysField(_BoundedIntField):
    alias = "replays"
    default = 5
    maximum = 1000
    help = (
        "How many times each retained witness payload is replayed in each of the fresh replay interpreters "
        "(six a round) under the pin. A review constant, not an optimum."
    )


class MaxExamplesField(_BoundedIntField):
    alias = "max_examples"
    default = 100
    maximum = 100_000
    help = "Hypothesis examples per search of each property."


class _PathListField(StringSequenceField):
    """Paths or globs relative to the BUILD file's directory; no excludes, no escapes."""

    @classmethod
    def compute_value(cls, raw_value: Optional[Iterable[str]], address: Address) -> tuple[str, ...]:
        values = super().compute_value(raw_value, address) or ()
        for value in values:
            problem = path_pattern_problem(value)
            if problem:
                raise InvalidFieldException(f"The `{cls.alias}` field in target {address}: {value!r}: {problem}.")
        return tuple(values)


class ImplPathsField(_PathListField):
    alias = "impl_paths"
    help = help_text(
        """
        Extra implementation paths (files or globs, relative to this BUILD file) beyond the code
        derived from `dependencies`, e.g. data files the implementation reads. May not overlap
        the oracle side.
        """
    )


class OraclePathsField(_PathListField):
    alias = "oracle_paths"
    help = help_text(
        """
        Extra oracle paths (files or globs, relative to this BUILD file) beyond the property
        sources and the fixture, e.g. data files the properties read (helper modules go in
        `oracle_dependencies`, which also brings them into the sandbox). May not overlap the
        implementation side.
        """
    )


class GeneratedOraclePathsField(_PathListField):
    alias = "generated_oracle_paths"
    help = help_text(
        """
        Generated files (stubs a tool or an agent rewrites) that count as oracle paths. A literal
        path counts even while the file does not exist.
        """
    )


class ConditionsField(StringSequenceField):
    alias = "conditions"
    help = help_text(
        """
        Production conditions the code meets, each searched and replayed under, in order: one
        string of NAME=VALUE words per condition, e.g. `["", "TZ=America/New_York",
        "SHOP_REGION=US"]` ("" is the workers' fixed environment: TZ=UTC, LC_ALL=C.UTF-8, no
        other variable). A witness records the condition it failed under. `PYTHONHASHSEED=0`
        turns hash randomization off; PATH, HOME, LD_*, HYPOTHESIS_* and the other PYTHON*
        variables cannot be declared. The runner checks each condition.
        """
    )


class WitnessPropertiesTarget(Target):
    alias = "witness_properties"
    core_fields = (
        *COMMON_TARGET_FIELDS,
        WitnessPropertiesSourcesField,
        WitnessPropertiesFixtureField,
        WitnessPropertiesDependenciesField,
        OracleDependenciesField,
        ReplaysField,
        MaxExamplesField,
        ImplPathsField,
        OraclePathsField,
        GeneratedOraclePathsField,
        ConditionsField,
    )
    help = help_text(
        """
        Property modules checked by witness-gate under `pants test`. Each run pins the fixture,
        searches and shrinks with Hypothesis, retains failures as hashed witnesses, replays each
        witness `replays` times, and labels it (regression, flake, oracle_defect, mixed_edit,
        not_reproduced, unclassified) against the changed files. With `[witness-gate].enabled`
        the target passes only when nothing failed or every failure is a flake under a valid
        freeze; the lock, witnesses and reports land in `dist/test/<target>/`. There is no skip
        field: this BUILD file is an oracle path of the target, like its sources.
        """
    )

    def validate(self) -> None:
        impl = self[ImplPathsField].value or ()
        oracle = (
            *(self[WitnessPropertiesSourcesField].value or ()),
            *(self[OraclePathsField].value or ()),
            *(self[GeneratedOraclePathsField].value or ()),
        )
        for impl_pattern in impl:
            for oracle_pattern in oracle:
                if patterns_overlap(impl_pattern, oracle_pattern):
                    raise InvalidFieldException(
                        f"The target {self.address} declares {impl_pattern!r} as implementation (`impl_paths`) "
                        f"but it overlaps the oracle entry {oracle_pattern!r} (`sources`, `oracle_paths` or "
                        f"`generated_oracle_paths`): each path must have one owner."
                    )


def path_pattern_problem(pattern: str) -> str | None:
    if not pattern or pattern != pattern.strip():
        return "empty, or leading or trailing whitespace"
    if pattern.startswith("!"):
        return "excludes are not supported here; list only what belongs to this side"
    if pattern.startswith("/") or "\\" in pattern or "\0" in pattern:
        return "give a path relative to the BUILD file, with '/' separators"
    if any(part in ("", ".", "..") for part in pattern.split("/")):
        return "empty, '.' or '..' path segment"
    return None


def has_glob(pattern: str) -> bool:
    return any(char in _GLOB_CHARS for char in pattern)


def patterns_overlap(first: str, second: str) -> bool:
    """Whether some path could match both patterns (`**` spans segments).

    Exact for literal segments; two wildcard segments are assumed to meet, so the
    answer errs towards reporting an overlap."""
    return _segments_overlap(tuple(first.split("/")), tuple(second.split("/")))


def _segments_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if not a or not b:
        return all(segment == "**" for segment in a + b)
    if a[0] == "**":
        return _segments_overlap(a[1:], b) or _segments_overlap(a, b[1:])
    if b[0] == "**":
        return _segments_overlap(a, b[1:]) or _segments_overlap(a[1:], b)
    return _segment_overlap(a[0], b[0]) and _segments_overlap(a[1:], b[1:])


def _segment_overlap(a: str, b: str) -> bool:
    if not has_glob(a) and not has_glob(b):
        return a == b
    if not has_glob(a):
        return fnmatch.fnmatchcase(a, b)
    if not has_glob(b):
        return fnmatch.fnmatchcase(b, a)
    return True
