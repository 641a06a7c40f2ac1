"""CODEOWNERS for the oracle: the lines `codeowners` prints, and `--check` on real files."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import SampleRepo

from support.review_repo import GRAPH_BUILD, graph_document

from witness_gate.codeowners import _matches, lines, owners_of, required, uncovered
from witness_gate.errors import WitnessGateError
from witness_gate.config import parse_config

CONFIG = parse_config(
    b'[tool.witness-gate]\nimport-paths = ["src"]\nfreezes-dir = "ci/freezes"\n'
    b'[[tool.witness-gate.suites]]\nname = "orders"\nfixture = "tests/fixtures/orders.json"\ngenerator-version = 3\n'
    b'properties = ["tests/properties"]\n',
    "pyproject.toml",
)


def test_every_oracle_path_gets_a_line_and_the_printed_lines_cover_them_all():
    patterns = [pattern for pattern, _ in required(CONFIG)]
    for expected in (
        "/tests/fixtures/orders.json",
        "/tests/properties/",
        "/ci/freezes/",
        "/pyproject.toml",
        "/pants",
        "/.github/",
    ):
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
        # GitHub's documented examples, and what gitignore's rules add to them.
        ("docs/*", "docs/getting-started.md", True),
        ("docs/*", "docs/build-app/troubleshooting.md", False),  # "/*": direct children only
        ("apps/", "src/apps/x.js", True),
        ("apps/", "apps", False),  # a trailing "/": directories only
        ("**/logs", "logs/a.txt", True),
        ("**/logs", "build/logs/a.txt", True),
        ("/build/logs/", "build/logs/x.txt", True),
        ("/apps/github", "apps/github/x", True),
        ("/apps/github", "apps/githubx", False),
        ("/src/*.py", "src/x.py", True),
        ("/src/*.py", "src/oracle/props.py", False),  # "*" never crosses a "/"
        ("/src/**/oracle.py", "src/oracle.py", True),  # "/**/": zero directories too
        ("/src/**/oracle.py", "src/a/b/oracle.py", True),
        ("/src/?.py", "src/a/b.py", False),
        ("docs/**", "x/docs/a", False),  # a "/" in the middle anchors
        ("*", "a/b/c", True),
    ],
)
def test_codeowners_patterns(pattern, path, owns):
    assert _matches(pattern, path) is owns


def test_the_last_line_whose_pattern_really_matches_owns_the_path():
    # With fnmatch's "*" (which crosses "/") the later /src/*.py line took src/oracle/ from its owners.
    text = "/src/oracle/ @acme/oracle-owners\n/src/*.py @acme/devs\n"
    assert owners_of(text, "src/oracle/props.py") == ["@acme/oracle-owners"]
    assert owners_of(text, "src/main.py") == ["@acme/devs"]


@pytest.mark.parametrize("pattern", ["!/tests/", "/tests/[ab]/", "/my\\ dir/"])
def test_syntax_github_skips_is_refused_not_guessed(pattern):
    with pytest.raises(WitnessGateError, match="GitHub does not support"):
        owners_of(f"{pattern} @owner\n", "tests/a/x.py")


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
    repo.write(
        "tests/BUILD",
        'witness_properties(name="orders", sources=["properties/orders_props.py"], '
        'fixture="//tests/fixtures:orders")\n',
    )
    repo.write("src/BUILD", 'python_sources(name="src")\n')  # the implementation's own build file is not a control
    failed = repo.cli("codeowners", "--check", "CODEOWNERS")
    assert failed.code == 1, failed.stdout + failed.stderr
    assert [line for line in failed.stdout.splitlines() if line.startswith("uncovered:")] == [
        "uncovered: /tests/BUILD has no owner in CODEOWNERS"
    ]
    assert "/tests/BUILD" in repo.cli("codeowners", "--owner", "@acme/spec").stdout


def test_suites_of_a_build_graph_need_owners_for_their_files_and_the_files_their_globs_add(repo: SampleRepo):
    repo.write(
        "pyproject.toml", '[tool.witness-gate]\nimport-paths = ["src"]\n'
    )  # the suite is declared once, in BUILD
    repo.write("tests/BUILD", GRAPH_BUILD)
    git = ["git", "-c", "user.email=o@witness-gate", "-c", "user.name=o"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], cwd=repo.root, check=True, capture_output=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo.root, check=True, capture_output=True, text=True
    ).stdout.strip()
    document = repo.root.parent / "suites.json"
    document.write_text(json.dumps(graph_document(head)))
    printed = repo.cli("codeowners", "--owner", "@acme/spec", "--suites", str(document))
    assert printed.code == 0, printed.stderr
    for pattern in (
        "/tests/properties/orders_props.py",
        "/tests/properties/*.py",
        "/tests/fixtures/orders.json",
        "/tests/BUILD",
    ):
        assert any(line.split()[0] == pattern for line in printed.stdout.splitlines()), (pattern, printed.stdout)
    repo.write(
        "CODEOWNERS",
        "/tests/properties/orders_props.py @acme/spec\n/tests/fixtures/ @acme/spec\n/tests/BUILD @acme/spec\n",
    )
    failed = repo.cli("codeowners", "--check", "CODEOWNERS", "--suites", str(document))
    assert (
        failed.code == 1 and "uncovered: /tests/properties/*.py has no owner in CODEOWNERS" in failed.stdout
    ), failed.stdout
    stale = repo.root.parent / "stale.json"
    stale.write_text(json.dumps(graph_document("f" * 40)))
    refused = repo.cli("codeowners", "--owner", "@acme/spec", "--suites", str(stale))
    assert refused.code == 2 and "not this checkout's HEAD" in refused.stderr, refused.stderr
