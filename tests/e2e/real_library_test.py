"""A miss is not forever, on a real library: semver's `next_version` bug (3.1.0, fixed in 3.1.1).

semver 3.1.0's `Version.next_version("prerelease")` returns a *lower* version for a
prerelease whose first identifier sorts after "rc" (`1.2.3-s` -> `1.2.3-rc.1`); 3.1.1 fixed
it. Both releases come from PyPI. A repository holds 3.1.1 and a property written from the
documented contract ("the next version is greater"); a pull request puts 3.1.0's package
back. The default search (100 examples from the schedule) misses the bug, so `review`
passes it; a deep search (20,000 examples) finds it; retained, the witness makes every
later review of a pull request that brings 3.1.0 back a `regression`, naming the entry.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from support.git_repo import GitRepo
from support.released import cli, suite_pyproject, write

PROPERTIES = '''"""semver's documented contract for next_version: the next version is greater."""

from hypothesis import strategies as st

import witness_gate
from semver import Version

_IDENTIFIER = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
prereleases = st.one_of(st.none(), st.from_regex(rf"{_IDENTIFIER}(\\.{_IDENTIFIER})*", fullmatch=True))
versions = st.fixed_dictionaries({
    "major": st.integers(0, 20), "minor": st.integers(0, 20), "patch": st.integers(0, 20), "prerelease": prereleases,
    "part": st.sampled_from(["major", "minor", "patch", "prerelease"]),
})


@witness_gate.property(payloads=versions)
def prop_next_version_is_greater(v: dict) -> bool:
    version = Version(v["major"], v["minor"], v["patch"], v["prerelease"])
    return version.next_version(v["part"]) > version
'''
PYPROJECT = suite_pyproject("semver")


def released(version: str, work: Path) -> dict[str, bytes]:
    """The `semver` package of a release, from its PyPI wheel: repository path -> bytes."""
    target = work / f"semver-{version}"
    done = subprocess.run(
        ["python3.11", "-m", "pip", "download", "--no-deps", "--quiet", f"semver=={version}", "-d", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = target.glob("semver-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return {f"src/{name}": archive.read(name) for name in archive.namelist() if name.startswith("semver/")}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> GitRepo:
    work = tmp_path_factory.mktemp("semver")
    fixed, buggy = released("3.1.1", work), released("3.1.0", work)
    repo = GitRepo(work / "repo")
    write(
        repo,
        {
            **fixed,
            "tests/properties/semver_props.py": PROPERTIES.encode(),
            "tests/fixtures/none.json": b"[]\n",
            "pyproject.toml": PYPROJECT.encode(),
            ".gitignore": b"/.artifacts/\n__pycache__/\n",
        },
    )
    repo.git("init", "-q", "-b", "main")
    repo.commit("semver 3.1.1, its next_version contract as a property")
    repo.git("checkout", "-q", "-b", "back-to-3.1.0")
    for path in fixed:
        (repo.root / path).unlink()
    write(repo, buggy)
    repo.commit("semver 3.1.0's package again")
    repo.git("checkout", "-q", "main")
    return repo


def review(repo: GitRepo, out: str) -> subprocess.CompletedProcess:
    return cli(repo, "review", "--base", "main", "--head", "back-to-3.1.0", "--out", str(repo.root.parent / out))


def test_a_real_regression_the_default_search_misses_is_retained_and_blocks_every_later_review(repo: GitRepo):
    missed = review(repo, "missed")
    assert missed.returncode == 0, missed.stdout + missed.stderr  # the miss the corpus is for

    # The deep search, on the pull request's code (a nightly job on main would run it on a
    # regression that landed): 20,000 examples.
    repo.git("checkout", "-q", "back-to-3.1.0")
    (repo.root / "changed.txt").write_text("src/semver/version.py\n")
    deep = cli(
        repo,
        "gate",
        "--fixture",
        "tests/fixtures/none.json",
        "--generator-version",
        "1",
        "--properties",
        "tests/properties",
        "--diff-paths",
        "changed.txt",
        "--max-examples",
        "20000",
        "--replays",
        "2",
        "--out",
        ".artifacts/deep",
    )
    assert deep.returncode == 1 and "regression: prop_next_version_is_greater" in deep.stdout, deep.stdout + deep.stderr
    [witness] = sorted((repo.root / ".artifacts/deep/witnesses").glob("*.json"))
    found = json.loads(witness.read_text())["payload"]
    assert found["part"] == "prerelease" and found["prerelease"] > "rc", found  # a prerelease that sorts after "rc"
    (repo.root / "changed.txt").unlink()

    repo.git("checkout", "-q", "main")
    retained = cli(repo, "retain", "--witness", str(witness))
    assert retained.returncode == 0, retained.stdout + retained.stderr
    repo.commit("retain the input the deep search found (reviewed as an oracle edit)")

    caught = review(repo, "caught")
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert "semver: regression: prop_next_version_is_greater" in caught.stdout
    assert f"this input failed before (corpus entry {witness.name}) and fails again" in caught.stdout
