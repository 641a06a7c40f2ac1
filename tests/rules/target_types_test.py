"""Parsing `witness_fixture` / `witness_properties`: bad declarations fail at BUILD-parse time."""

from __future__ import annotations

import pytest
from pants.engine.addresses import Address
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import RuleRunner

from witness_gate_pants.target_types import (
    GeneratorVersionField,
    ImplPathsField,
    ReplaysField,
    WitnessFixtureTarget,
    WitnessPropertiesTarget,
    path_pattern_problem,
    patterns_overlap,
)


@pytest.fixture
def rule_runner() -> RuleRunner:
    return RuleRunner(target_types=[WitnessFixtureTarget, WitnessPropertiesTarget])


def parse(rule_runner: RuleRunner, build: str, name: str = "props"):
    rule_runner.write_files({"pkg/BUILD": build, "pkg/props.py": "", "pkg/fixture.json": "[]", "pkg/data.csv": ""})
    return rule_runner.get_target(Address("pkg", target_name=name))


FIXTURE = 'witness_fixture(name="fx", source="fixture.json", generator_version=3)\n'


def test_a_valid_declaration_parses_with_its_defaults(rule_runner):
    target = parse(
        rule_runner,
        FIXTURE + 'witness_properties(name="props", sources=["props.py"], fixture=":fx", impl_paths=["data.csv"])',
    )
    assert target[ReplaysField].value == 5
    assert target[ImplPathsField].value == ("data.csv",)
    assert parse(rule_runner, FIXTURE, name="fx")[GeneratorVersionField].value == 3


@pytest.mark.parametrize(
    "fields, message",
    [
        ('impl_paths=["props.py"]', "overlaps the oracle entry 'props.py'"),
        ('impl_paths=["*.py"]', "overlaps the oracle entry 'props.py'"),
        ('impl_paths=["gen/**"], generated_oracle_paths=["gen/stub.py"]', "overlaps the oracle entry 'gen/stub.py'"),
        ('impl_paths=["lib/**"], oracle_paths=["**/helpers.py"]', "overlaps the oracle entry '**/helpers.py'"),
        ('impl_paths=["../elsewhere.py"]', "'..' path segment"),
        ('impl_paths=["/abs.py"]', "relative to the BUILD file"),
        ('oracle_paths=["!props.py"]', "excludes are not supported"),
        ("replays=0", "replays"),
        ("replays=1001", "at most 1000"),
        ("max_examples=0", "max_examples"),
    ],
)
def test_bad_declarations_are_refused_at_parse_time(rule_runner, fields, message):
    with pytest.raises(ExecutionError, match=message.replace("*", r"\*")):
        parse(rule_runner, FIXTURE + f'witness_properties(name="props", sources=["props.py"], fixture=":fx", {fields})')


def test_fixture_and_sources_are_required(rule_runner):
    with pytest.raises(ExecutionError, match="fixture"):
        parse(rule_runner, 'witness_properties(name="props", sources=["props.py"])')
    with pytest.raises(ExecutionError, match="generator_version"):
        parse(rule_runner, 'witness_fixture(name="fx", source="fixture.json")', name="fx")


@pytest.mark.parametrize(
    "first, second, expected",
    [
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/b.py", False),
        ("src/**", "src/props/p.py", True),
        ("src/*.py", "src/props/p.py", False),
        ("src/*.py", "src/p.py", True),
        ("**", "anything/at/all.txt", True),
        ("**/*.py", "x.py", True),
        ("a/**/z.py", "a/b/c/z.py", True),
        ("a/**/z.py", "a/b/c/y.py", False),
        ("lib/**", "tests/**", False),
        ("*.py", "*.txt", True),  # two wildcards: reported, erring towards an overlap
    ],
)
def test_patterns_overlap(first, second, expected):
    assert patterns_overlap(first, second) is expected
    assert patterns_overlap(second, first) is expected


def test_path_pattern_problems():
    assert path_pattern_problem("src/a.py") is None
    assert path_pattern_problem("src//a.py") is not None
    assert path_pattern_problem(" src") is not None
    assert path_pattern_problem("a\\b") is not None
