"""`[tool.witness-gate]` as the review reads it from the base: suites and their oracle."""

from __future__ import annotations

import pytest

from witness_gate.config import parse_config
from witness_gate.errors import WitnessGateError

SUITE = (
    b'[[tool.witness-gate.suites]]\nname = "orders"\nfixture = "tests/fixtures/orders.json"\ngenerator-version = '
    b'3\nproperties = ["tests/properties"]\n'
)


def test_a_suite_declares_its_oracle_dependencies():
    config = parse_config(SUITE + b'oracle-dependencies = ["tests/strategies/", "tests/checks.py"]\n', "pyproject.toml")
    assert config.suites[0].oracle_dependencies == ("tests/strategies", "tests/checks.py")
    assert parse_config(SUITE, "pyproject.toml").suites[0].oracle_dependencies == ()


@pytest.mark.parametrize(
    "extra, message",
    [
        (b'oracle-dependencies = "tests/strategies"\n', "oracle-dependencies must be a list"),
        (b"oracle-dependencies = [3]\n", "oracle-dependencies must be a list of paths"),
        (b'oracle-dependencies = ["../outside"]\n', "not normalized"),
        (b'oracle-dependencies = ["src"]\n', "'src' is declared both implementation and oracle"),
    ],
    ids=["a string", "a number", "outside the repository", "the implementation itself"],
)
def test_bad_oracle_dependencies_are_refused(extra, message):
    with pytest.raises(WitnessGateError, match=message):
        parse_config(b'[tool.witness-gate]\nimpl-prefixes = ["src/"]\n' + SUITE + extra, "pyproject.toml")


@pytest.mark.parametrize("name", ["../outside", "a/b", "..", "", "two words"])
def test_a_suite_name_that_is_not_one_folder_is_refused(name: str):
    # Review writes each suite's artifacts to <--out>/<name>: a name may not lead elsewhere.
    with pytest.raises(WitnessGateError, match="must be letters, digits"):
        parse_config(SUITE.replace(b'name = "orders"', f'name = "{name}"'.encode()), "pyproject.toml")


@pytest.mark.parametrize(
    "table, message",
    [
        (b'per-change-search = "yes"\n', "per-change-search must be true or false"),
        (b"corpus-dir = 3\n", "corpus-dir must be a string"),
        (b'corpus-dir = "../elsewhere"\n', "not normalized"),
        (b'requirements = ["a.txt"]\n', "requirements must be a string"),
        (b'requirements = "/etc/requirements.txt"\n', "absolute path"),
    ],
    ids=[
        "per-change-search not a boolean",
        "corpus-dir not a string",
        "corpus-dir outside the repository",
        "requirements not a string",
        "requirements outside the repository",
    ],
)
def test_bad_corpus_and_search_settings_are_refused(table: bytes, message: str):
    with pytest.raises(WitnessGateError, match=message):
        parse_config(b"[tool.witness-gate]\n" + table, "pyproject.toml")


@pytest.mark.parametrize(
    "conditions, message",
    [
        (b'conditions = "TZ=UTC"\n', "conditions must be a list"),
        (b'conditions = ["TZ=UTC"]\n', "a condition is a table of environment variables"),
        (b'conditions = [{LD_PRELOAD = "x.so"}]\n', "'LD_PRELOAD' cannot be declared"),
    ],
    ids=["not a list", "a string, not a table", "a refused variable"],
)
def test_bad_suite_conditions_are_refused(conditions: bytes, message: str):
    with pytest.raises(WitnessGateError, match=message):
        parse_config(SUITE + conditions, "pyproject.toml")
