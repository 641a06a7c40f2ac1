"""Output paths: only a regular file (or, for a directory output, a directory) is ever
replaced, and nothing is deleted by path.

Each command's output is refused before anything runs when it names a FIFO, a device
node, a symlink or the wrong kind, on a run that would succeed and on one that is
refused alike: exit 2, one line, and the node still there, untouched. The device nodes
are copies of /dev/null's numbers made in the test's own directory, never /dev/null.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLE, SampleRepo, add_flaky_property
from support.sample_repo import copy_example
from support.tools import missing

from witness_gate import store
from witness_gate.errors import WitnessGateError

FIXTURE = "tests/fixtures/orders.json"
IMPL = "src/orders_app/pricing.py"


def make_device(path: Path) -> None:
    if os.geteuid() != 0:
        missing("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o600, os.stat("/dev/null").st_rdev)


def make_symlink(path: Path, to_directory: bool) -> None:
    target = path.with_name(path.name + ".target")
    if to_directory:
        target.mkdir()
    else:
        target.write_text("the symlink's target\n")
    os.symlink(target, path)


# What each node is in the refusal's words, and how to make it at a file or a directory output.
NODES: dict[str, tuple[str, Callable[[Path, bool], object]]] = {
    "fifo": ("FIFO", lambda path, _: os.mkfifo(path)),
    "device": ("character device", lambda path, _: make_device(path)),
    "symlink": ("symlink", make_symlink),
    "wrong-kind": ("", lambda path, is_dir: path.write_text("a file\n") if is_dir else path.mkdir()),
}


def identity(path: Path) -> tuple:
    """What must not change: the node itself (inode, type, device numbers) and a symlink's target."""
    info = os.lstat(path)
    target = path.with_name(path.name + ".target")
    seen = sorted(os.listdir(target)) if target.is_dir() else target.read_text() if target.exists() else None
    return info.st_ino, info.st_mode, info.st_rdev, seen


@pytest.fixture(scope="module")
def flaky(tmp_path_factory) -> tuple[SampleRepo, dict]:
    """A pinned, checked and classified copy of the example with one flake: the inputs of a
    successful run of every command but review."""
    repo = copy_example(tmp_path_factory.mktemp("flaky") / "orders")
    add_flaky_property(repo)
    assert repo.pin().code == 0
    assert repo.check().code == 1
    assert repo.classify(IMPL).code == 0
    [entry] = repo.report_json()["witnesses"]
    assert entry["label"] == "flake", entry
    return repo, entry


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory) -> Path:
    """The example as a git repository, for review: base and head both its one commit."""
    root = tmp_path_factory.mktemp("review") / "repo"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".artifacts", "__pycache__", "BUILD"))
    git = ["git", "-c", "user.email=t@witness-gate", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return root


def command_args(name: str, good: bool, repo: SampleRepo, entry: dict, git_root: Path, scratch: Path) -> list[str]:
    """The command's arguments, every output in `scratch`: a run that succeeds, or one refused for a missing input."""
    missing = str(scratch / "missing")
    if name == "pin":
        return [
            "pin",
            "--fixture",
            FIXTURE if good else missing,
            "--generator-version",
            "3",
            "--out",
            str(scratch / "lock"),
        ]
    if name == "check":
        return [
            "check",
            "--lock",
            repo.lock if good else missing,
            "--properties",
            "tests/properties",
            "--out",
            str(scratch / "witnesses"),
        ]
    if name == "classify":
        return [
            "classify",
            "--lock",
            repo.lock if good else missing,
            "--witnesses",
            ".artifacts/witnesses",
            "--diff-paths",
            "changed.txt",
            "--out",
            str(scratch / "report.json"),
            "--junit-xml",
            str(scratch / "junit.xml"),
        ]
    if name == "freeze":
        [witness] = repo.witness_files()
        return [
            "freeze",
            "--assertion",
            "prop_sometimes",
            "--lock",
            repo.lock,
            "--witness",
            str(witness) if good else missing,
            "--failures",
            str(entry["failures"]),
            "--runs",
            str(entry["runs"]),
            "--expires-in-hours",
            "24",
            "--out",
            str(scratch / "freeze.json"),
        ]
    if name == "gate":
        return [
            "gate",
            "--fixture",
            FIXTURE if good else missing,
            "--generator-version",
            "3",
            "--properties",
            "tests/properties",
            "--diff-paths",
            "changed.txt",
            "--out",
            str(scratch / "gate"),
            "--junit-xml",
            str(scratch / "junit.xml"),
        ]
    assert name == "review"
    return [
        "review",
        "--repo",
        str(git_root),
        "--base",
        "main" if good else "refs/heads/missing",
        "--head",
        "main",
        "--out",
        str(scratch / "review"),
        "--junit-xml",
        str(scratch / "junit.xml"),
        "--sarif",
        str(scratch / "review.sarif"),
        "--summary",
        str(scratch / "summary.md"),
    ]


# (command, output option, a directory output?)
OUTPUTS = [
    ("pin", "--out", False),
    ("check", "--out", True),
    ("classify", "--out", False),
    ("classify", "--junit-xml", False),
    ("freeze", "--out", False),
    ("gate", "--out", True),
    ("gate", "--junit-xml", False),
    ("review", "--out", True),
    ("review", "--junit-xml", False),
    ("review", "--sarif", False),
    ("review", "--summary", False),
]


@pytest.mark.parametrize("good", [True, False], ids=["successful-run", "refused-run"])
@pytest.mark.parametrize("node", NODES)
@pytest.mark.parametrize("command, option, is_dir", OUTPUTS, ids=[f"{c}{o}" for c, o, _ in OUTPUTS])
def test_an_output_that_is_not_a_plain_file_or_directory_is_refused_before_the_run(
    flaky, git_repo, tmp_path, command, option, is_dir, node, good
):
    repo, entry = flaky
    args = command_args(command, good, repo, entry, git_repo, tmp_path)
    path = Path(args[args.index(option) + 1])
    kind, make = NODES[node]
    make(path, is_dir)
    before = identity(path)
    result = repo.cli(*args)
    assert result.code == 2, result.stdout + result.stderr
    wanted = "not a directory" if is_dir else "not a regular file"
    kind = kind or ("regular file" if is_dir else "directory")
    assert result.stderr.splitlines() == [
        f"witness-gate: error: {path}: {option} is a {kind}, {wanted}; remove it or give another path"
    ]
    assert identity(path) == before
    made = {path.name, path.name + ".target"} if node == "symlink" else {path.name}
    assert {p.name for p in tmp_path.iterdir()} == made  # nothing else written, no temp file left behind


def test_the_gate_refuses_a_staging_directory_that_is_a_symlink(flaky, tmp_path):
    repo, _ = flaky
    stage = tmp_path / ".gate.staging"
    make_symlink(stage, to_directory=True)
    (tmp_path / ".gate.staging.target" / "fixture.lock").write_text("someone else's file\n")
    before = identity(stage)
    result = repo.cli(*command_args("gate", True, repo, {}, tmp_path, tmp_path))
    assert result.code == 2 and result.stderr.splitlines() == [
        f"witness-gate: error: {stage}: the gate's staging directory is a symlink, not a directory; remove it or give "
        "another path"
    ]
    assert identity(stage) == before and not (tmp_path / "gate").exists()


# --- the last check, right before the rename --------------------------------------------


@pytest.mark.parametrize("node", ["fifo", "device", "symlink", "wrong-kind"])
def test_write_atomic_renames_over_nothing_but_a_regular_file(tmp_path, node):
    # The pre-run check can be outrun: whatever took the path's place since is refused too.
    path = tmp_path / "artifact.json"
    NODES[node][1](path, False)
    before = identity(path)
    with pytest.raises(WitnessGateError, match=f"^{path}: output is a .*, not a regular file"):
        store.write_atomic(path, b"{}\n")
    assert identity(path) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_mark_stale_replaces_a_regular_file_leaves_nothing_as_nothing_and_refuses_a_node(tmp_path):
    report = tmp_path / "report.json"
    store.mark_stale(report, "why")
    assert not os.path.lexists(report)
    report.write_text('{"verdict": "pass"}\n')
    store.mark_stale(report, "classify refused")
    assert json.loads(report.read_text()) == {"stale": "classify refused"}
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(WitnessGateError, match="is a FIFO"):
        store.mark_stale(fifo, "why")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# --- a stale report is replaced, never deleted, and vouches for nothing ----------------


def test_a_refused_classify_replaces_the_old_report_with_a_stale_record_that_no_reader_accepts(flaky, tmp_path):
    repo, entry = flaky
    report = tmp_path / "report.json"
    shutil.copyfile(repo.report, report)
    refused = repo.cli(
        "classify",
        "--lock",
        str(tmp_path / "missing"),
        "--witnesses",
        ".artifacts/witnesses",
        "--diff-paths",
        "changed.txt",
        "--out",
        str(report),
    )
    assert refused.code == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    [stale] = json.loads(report.read_text()).values()
    assert stale.startswith("classify refused the run that would have replaced this report: ") and "missing" in stale
    [witness] = repo.witness_files()
    frozen = repo.cli(
        "freeze",
        "--assertion",
        "prop_sometimes",
        "--lock",
        repo.lock,
        "--witness",
        str(witness),
        "--report",
        str(report),
        "--failures",
        str(entry["failures"]),
        "--runs",
        str(entry["runs"]),
        "--expires-in-hours",
        "24",
        "--out",
        str(tmp_path / "freeze.json"),
    )
    assert frozen.code == 2 and frozen.stderr.splitlines() == [
        f"witness-gate: error: {report}: no report here: {stale}"
    ]
    assert not (tmp_path / "freeze.json").exists()


# --- modes --------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o077], ids=["umask-022", "umask-077"])
def test_artifacts_get_the_mode_the_umask_gives(repo: SampleRepo, umask: int):
    old = os.umask(umask)  # the CLI's subprocess inherits it
    try:
        pinned = repo.pin()
        gated = repo.gate(extra=("--junit-xml", ".artifacts/junit.xml"))
    finally:
        os.umask(old)
    assert pinned.code == 0 and gated.code == 0, pinned.stderr + gated.stdout + gated.stderr
    written = [repo.root / repo.lock, repo.root / ".artifacts/junit.xml", *(repo.root / ".artifacts/gate").rglob("*.*")]
    assert {path.name for path in written} >= {"fixture.lock", "junit.xml", "gate.json", "classification.json"}
    assert {path.name: oct(stat.S_IMODE(path.stat().st_mode)) for path in written} == {
        path.name: oct(0o666 & ~umask) for path in written
    }
