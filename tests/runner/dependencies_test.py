"""The code's own third-party packages: the base's requirements file, pinned by hash, is
installed by the review outside the sandbox and shown to its workers read-only. Reviewed by
the real `witness-gate review`, with a wheel this test builds and serves from a directory."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support.review_repo import GRAPH_BUILD, IMPL, Repo, buggy, graph_document, review_repo
from witness_gate import dependencies
from witness_gate.errors import WitnessGateError


def build_wheel(directory: Path) -> str:
    """tinymath 1.0 as a wheel in `directory`; its sha256."""
    directory.mkdir()
    wheel = directory / "tinymath-1.0-py3-none-any.whl"
    files = {
        "tinymath/__init__.py": "def times(a, b):\n    return a * b\n",
        "tinymath-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinymath\nVersion: 1.0\n",
        "tinymath-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: witness-gate-tests\nRoot-Is-Purelib: "
        "true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, "tinymath-1.0.dist-info/RECORD"])
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**files, "tinymath-1.0.dist-info/RECORD": record}.items():
            archive.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), text)
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """The orders example whose base declares tinymath in requirements.lock."""
    digest = build_wheel(tmp_path / "wheels")
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "requirements.lock").write_text(
        f"--no-index\n--find-links {(tmp_path / 'wheels').as_uri()}\ntinymath==1.0 --hash=sha256:{digest}\n"
    )
    repo.edit("pyproject.toml", "[tool.witness-gate]\n", '[tool.witness-gate]\nrequirements = "requirements.lock"\n')
    repo.commit("base: the code may use tinymath")
    repo.branch("patch")
    return repo


def uses_tinymath(repo: Repo) -> None:
    repo.edit(
        IMPL,
        'return line["qty"] * line["price"]',
        'from tinymath import times\n\n    return times(line["qty"], line["price"])',
    )


def test_an_honest_change_that_uses_a_dependency_the_base_declares_passes(repo: Repo):
    uses_tinymath(repo)
    repo.commit("line totals through tinymath")
    result = repo.review()
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bug_behind_a_declared_dependency_is_still_found(repo: Repo):
    uses_tinymath(repo)
    repo.edit(
        IMPL,
        'return times(line["qty"], line["price"])',
        'return times(line["qty"], line["price"]) - (1 if line["qty"] > 3 else 0)',
    )
    repo.commit("a bug, through tinymath")
    result = repo.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "orders: regression" in result.stdout


def test_a_head_that_changes_the_dependencies_edits_a_gate_control(repo: Repo):
    buggy(repo)
    (repo.root / "requirements.lock").write_text(
        (repo.root / "requirements.lock").read_text() + "# and whatever else\n"
    )
    repo.commit("a bug, and the dependencies edited")
    result = repo.review()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "oracle edit: requirements.lock" in output and "gate controls (the code's dependencies)" in output, output


def test_a_requirements_file_pip_cannot_install_is_a_setup_failure_not_a_verdict(repo: Repo):
    repo.git("checkout", "-q", "main")
    repo.edit("requirements.lock", "tinymath==1.0 --hash=sha256:", "tinymath==1.0 --hash=sha256:0")
    repo.commit("base: a hash that no file has")
    repo.branch("patch")
    uses_tinymath(repo)
    repo.commit("line totals through tinymath")
    result = repo.review()
    assert result.returncode == 2, result.stdout + result.stderr
    assert "setup failed: pip could not install the base's requirements.lock" in result.stderr


def test_a_pip_package_in_the_checkout_never_runs_as_the_reviews_user(repo: Repo, tmp_path: Path):
    # The review runs from the CI checkout, which holds the head's files: `python -m pip`
    # there would import the head's `pip` (outside the sandbox, as root under CI).
    marker = tmp_path / "pip-ran"
    (repo.root / "pip").mkdir()
    (repo.root / "pip/__init__.py").write_text("")
    (repo.root / "pip/__main__.py").write_text(f"open({str(marker)!r}, 'w').write('head code ran')\n")
    uses_tinymath(repo)
    repo.commit("line totals through tinymath, and a pip of its own")
    result = repo.review()
    assert not marker.exists(), "the head's pip ran outside the sandbox"
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_base_that_names_a_requirements_file_it_does_not_have_is_refused(repo: Repo):
    repo.git("checkout", "-q", "main")
    repo.git("rm", "-q", "requirements.lock")
    repo.commit("base: the file is gone, the key stays")
    repo.branch("patch")
    uses_tinymath(repo)
    repo.commit("line totals through tinymath")
    result = repo.review()
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the base pins its code's dependencies in 'requirements.lock', which it does not have" in result.stderr


# --- a build graph's resolve --------------------------------------------------------------------


def pants_lock(requirements: list[dict]) -> bytes:
    """A lockfile as `pants generate-lockfiles` writes it: a `//` header, then pex's lock."""
    body = {"locked_resolves": [{"platform_tag": None, "locked_requirements": requirements}], "pex_version": "2.1.148"}
    return (
        "// This lockfile was autogenerated by Pants.\n// --- BEGIN PANTS LOCKFILE METADATA: DO NOT EDIT OR REMOVE "
        "---\n"
        "// {}\n// --- END PANTS LOCKFILE METADATA ---\n\n" + json.dumps(body, indent=2)
    ).encode()


def locked(
    name: str, version: str, *requires: str, url: str = "https://files.example/x.whl", digest: str = "ab"
) -> dict:
    return {
        "project_name": name,
        "version": version,
        "requires_dists": list(requires),
        "artifacts": [{"algorithm": "sha256", "hash": digest, "url": url}],
    }


def test_the_suites_projects_and_what_they_require_are_pinned_by_every_hash_the_lockfile_records():
    lock = pants_lock(
        [
            locked("Typer", "0.16.0", "click>=8", 'rich>=10; extra == "all"', digest="t1"),
            locked(
                "click",
                "8.1.7",
                'colorama; platform_system == "Windows"',
                digest="c1",
                url="file:///wheels/click-8.1.7-py3-none-any.whl",
            ),
            locked("unused", "1.0", digest="u1"),
        ]
    )
    pinned = dependencies.pinned_from_lock(lock, ("typer",), "3rdparty/python/default.lock").decode()
    # rich and colorama: requirements this resolve did not need (an extra, another platform)
    assert pinned == "--find-links file:///wheels\nclick==8.1.7 --hash=sha256:c1\ntyper==0.16.0 --hash=sha256:t1\n"


@pytest.mark.parametrize(
    "requirements, message",
    [
        ([locked("click", "8.1.7")], "the suites require typer, which the lockfile does not pin: regenerate it"),
        (
            [locked("typer", "0.16.0"), {**locked("typer", "0.15.0"), "artifacts": []}],
            "typer is locked at 0.15.0, 0.16.0",
        ),
    ],
)
def test_a_lockfile_that_cannot_pin_the_suites_projects_is_refused(requirements: list[dict], message: str):
    with pytest.raises(WitnessGateError, match=message):
        dependencies.pinned_from_lock(pants_lock(requirements), ("typer",), "default.lock")


@pytest.mark.parametrize(
    "text", [b"// only a header\n", b'{"locked_resolves": [{"platform_tag": null}]}', b"requirements.txt==1\n"]
)
def test_a_file_that_is_no_pants_lockfile_is_refused(text: bytes):
    with pytest.raises(WitnessGateError, match="default.lock: not a Pants lockfile"):
        dependencies.pinned_from_lock(text, ("typer",), "default.lock")


@pytest.fixture
def graph_repo(tmp_path: Path) -> Repo:
    """The orders example declared in tests/BUILD, its resolve's lockfile pinning tinymath."""
    digest = build_wheel(tmp_path / "wheels")
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "pyproject.toml").unlink()
    (repo.root / "tests/BUILD").write_text(GRAPH_BUILD)
    (repo.root / "default.lock").write_bytes(
        pants_lock(
            [locked("tinymath", "1.0", url=(tmp_path / "wheels/tinymath-1.0-py3-none-any.whl").as_uri(), digest=digest)]
        )
    )
    repo.commit("base: the suite declared in BUILD, its code may use tinymath")
    repo.branch("patch")
    return repo


def review_with_resolve(repo: Repo):
    document = graph_document(repo.git("rev-parse", "main"))
    return repo.review_graph(
        {**document, "requirements": {"lockfile": "default.lock", "projects": ["tinymath"]}},
        extra=("--repo", str(repo.root)),
    )


def test_an_honest_change_that_uses_a_dependency_the_graph_requires_passes(graph_repo: Repo):
    uses_tinymath(graph_repo)
    graph_repo.commit("line totals through tinymath")
    result = review_with_resolve(graph_repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_head_that_changes_the_graphs_lockfile_edits_a_gate_control(graph_repo: Repo):
    buggy(graph_repo)
    with open(graph_repo.root / "default.lock", "a") as lock:
        lock.write("\n")
    graph_repo.commit("a bug, and the lockfile edited")
    result = review_with_resolve(graph_repo)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "oracle edit: default.lock" in output and "gate controls (the code's dependencies)" in output, output


def test_a_flake_of_a_graph_suite_with_dependencies_is_frozen_from_the_review_as_it_ran(graph_repo: Repo):
    # The freeze replays in the tree the review judged, with what its workers were shown:
    # the resolve's packages first on the import path, as the review replayed.
    graph_repo.edit(
        IMPL,
        'return line["qty"] * line["price"]',
        "import random\n    from tinymath import times\n\n"
        '    return times(line["qty"], line["price"]) - (1 if line["qty"] > 3 and random.random() < 0.4 else 0)',
    )
    graph_repo.commit("line totals through tinymath, and an experiment")
    red = review_with_resolve(graph_repo)
    assert red.returncode == 1 and "tests.properties: flake: prop_order_total_non_negative" in red.stdout, (
        red.stdout + red.stderr
    )
    [told] = [line for line in red.stdout.splitlines() if "to freeze it, open a pull request of its own" in line]
    command = shlex.split(told.split(": witness-gate ", 1)[1])
    command[command.index("--suites") + 1] = str(
        graph_repo.root.parent / "suites.json"
    )  # the base's graph, as the review read it
    graph_repo.git("checkout", "-q", "main")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    frozen = subprocess.run(
        [sys.executable, "-m", "witness_gate", *command],
        cwd=graph_repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
