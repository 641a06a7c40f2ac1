"""CODEOWNERS for the oracle: the lines `codeowners` prints, and `--check` on real files."""

from __future__ import annotations

import pytest
from conftest import SampleRepo

from witness_gate.codeowners import _matches, lines, required, uncovered
from witness_gate.config import parse_config

CONFIG = parse_config(
    b'[tool.witness-gate]\nimport-paths = ["src"]\nfreezes-dir = "ci/freezes"\n'
    b'[[tool.witness-gate.suites]]\nname = "orders"\nfixture = "tests/fixtures/orders.json"\ngenerator-version = 3\n'
    b'properties = ["tests/properties"]\n',
    "pyproject.toml",
)


def test_every_oracle_path_gets_a_line_and_the_printed_lines_cover_them_all():
    patterns = [pattern for pattern, _ in required(CONFIG)]
    for expected in ("/tests/fixtures/orders.json", "/tests/properties/", "/ci/freezes/", "/pyproject.toml", "/pants", "/.github/"):
        assert expected in patterns
    assert uncovered(CONFIG, "\n".join(lines(CONFIG, ["@acme/spec"]))) == []


@pytest.mark.parametrize(
    "codeowners, missing",
    [
        ("/src/ @acme/devs\n", "/tests/properties/"),
        ("* @acme/spec\n/tests/ \n", "/tests/properties/"),  # a later line without an owner un-owns
        ("* @acme/spec\n/ci/freezes/*.json\n", "/ci/freezes/"),
        ("*.py @acme/spec\n", "/pyproject.toml"),
    ],
)
def test_check_names_what_an_existing_file_leaves_unowned(codeowners, missing):
    assert missing in uncovered(CONFIG, codeowners)


@pytest.mark.parametrize(
    "pattern, path, owns",
    [
        ("/tests/properties/", "tests/properties/a.py", True),
        ("/tests/properties/", "tests/properties", False),
        ("tests/", "tests/properties/a.py", True),
        ("properties/", "tests/properties/a.py", True),
        ("/properties/", "tests/properties/a.py", False),
        ("*.json", "tests/fixtures/orders.json", True),
        ("/docs/**", "docs/a/b.md", True),
        ("pants", "pants", True),
        ("pants", "src/pants/x.py", True),
        ("/pants", "src/pants", False),
    ],
)
def test_codeowners_patterns(pattern, path, owns):
    assert _matches(pattern, path) is owns


def test_the_command_prints_and_checks(repo: SampleRepo):
    printed = repo.cli("codeowners", "--owner", "@acme/spec")
    assert printed.code == 0, printed.stderr
    assert "/tests/fixtures/orders.json @acme/spec" in printed.stdout.replace("  ", " ").replace("  ", " ")
    repo.write("CODEOWNERS", printed.stdout)
    assert repo.cli("codeowners", "--check", "CODEOWNERS").code == 0
    repo.write("CODEOWNERS", "/src/ @acme/devs\n")
    failed = repo.cli("codeowners", "--check", "CODEOWNERS")
    assert failed.code == 1 and "uncovered: /tests/properties/ has no owner in CODEOWNERS" in failed.stdout
    assert repo.cli("codeowners").code == 2


def test_a_build_file_that_declares_gated_targets_needs_an_owner(repo: SampleRepo):
    printed = repo.cli("codeowners", "--owner", "@acme/spec")
    repo.write("CODEOWNERS", printed.stdout)
    repo.write("tests/BUILD", 'witness_properties(name="orders", sources=["properties/orders_props.py"], fixture="//tests/fixtures:orders")\n')
    repo.write("src/BUILD", 'python_sources(name="src")\n')  # the implementation's own build file is not a control
    failed = repo.cli("codeowners", "--check", "CODEOWNERS")
    assert failed.code == 1, failed.stdout + failed.stderr
    assert [line for line in failed.stdout.splitlines() if line.startswith("uncovered:")] == ["uncovered: /tests/BUILD has no owner in CODEOWNERS"]
    assert "/tests/BUILD" in repo.cli("codeowners", "--owner", "@acme/spec").stdout
