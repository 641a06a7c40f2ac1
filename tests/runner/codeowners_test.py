"""CODEOWNERS for the oracle: the lines `codeowners` prints, and `--check` on real files."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import SampleRepo

from support.review_repo import GRAPH_BUILD, graph_document

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


def test_suites_of_a_build_graph_need_owners_for_their_files_and_the_files_their_globs_add(repo: SampleRepo):
    repo.write("pyproject.toml", '[tool.witness-gate]\nimport-paths = ["src"]\n')  # the suite is declared once, in BUILD
    repo.write("tests/BUILD", GRAPH_BUILD)
    git = ["git", "-c", "user.email=o@witness-gate", "-c", "user.name=o"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], cwd=repo.root, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.root, check=True, capture_output=True, text=True).stdout.strip()
    document = repo.root.parent / "suites.json"
    document.write_text(json.dumps(graph_document(head)))
    printed = repo.cli("codeowners", "--owner", "@acme/spec", "--suites", str(document))
    assert printed.code == 0, printed.stderr
    for pattern in ("/tests/properties/orders_props.py", "/tests/properties/*.py", "/tests/fixtures/orders.json", "/tests/BUILD"):
        assert any(line.split()[0] == pattern for line in printed.stdout.splitlines()), (pattern, printed.stdout)
    repo.write("CODEOWNERS", "/tests/properties/orders_props.py @acme/spec\n/tests/fixtures/ @acme/spec\n/tests/BUILD @acme/spec\n")
    failed = repo.cli("codeowners", "--check", "CODEOWNERS", "--suites", str(document))
    assert failed.code == 1 and "uncovered: /tests/properties/*.py has no owner in CODEOWNERS" in failed.stdout, failed.stdout
    stale = repo.root.parent / "stale.json"
    stale.write_text(json.dumps(graph_document("f" * 40)))
    refused = repo.cli("codeowners", "--owner", "@acme/spec", "--suites", str(stale))
    assert refused.code == 2 and "not this checkout's HEAD" in refused.stderr, refused.stderr
