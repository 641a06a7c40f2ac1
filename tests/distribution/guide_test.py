"""What docs/adopt.md tells a newcomer besides the blocks the adoption tests run: how the
wheels are built, which lockfile to commit, what to keep out of git, and the `.bazelrc`
line that undoes Debian's `--sandbox_debug`."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

from support.guide import GUIDE, guide_blocks
from support.tools import missing

import witness_gate

ROOT = Path(__file__).resolve().parents[2]


def guide() -> str:
    return " ".join(GUIDE.read_text().split())  # one line: the prose wraps anywhere


def test_the_guide_builds_the_wheels_this_build_makes():
    version = witness_gate.__version__
    assert "`./pants package runner:dist rules:dist` writes" in guide()
    for name, build in (("witness_gate", "runner/BUILD"), ("witness_gate_pants", "rules/BUILD")):
        assert f"`dist/{name}-{version}-py3-none-any.whl`" in guide(), name
        declared = (ROOT / build).read_text()
        assert re.search(
            rf'python_distribution\(\s*name="dist",.*?name="{name.replace("_", "-")}",\s*version="{version}"',
            declared,
            re.S,
        ), build
    [wheel] = Path.cwd().glob(f"witness_gate-{version}-py3-none-any.whl")  # this test's runtime package, runner:dist
    assert "SOURCE_DATE_EPOCH=" in (ROOT / "pants.toml").read_text()


def test_the_lockfile_the_guide_says_to_commit_is_the_one_its_pants_toml_resolves_from():
    resolves = tomllib.loads(guide_blocks("file")["pants.toml"])["python"]["resolves"]
    assert list(resolves.values()) == ["3rdparty/python/default.lock"]
    assert "commit the lockfile (`3rdparty/python/default.lock`)" in guide()


def test_the_gitignore_advice_keeps_out_what_the_tools_write_and_keeps_the_oracle(tmp_path: Path):
    # Where each path comes from: the launcher, the job, the guide's own commands.
    runs = "\n".join(guide_blocks("run").values())
    assert '"$buildroot/.pants-bootstrap/pex"' in (ROOT / "pants").read_text()
    assert "mkdir -p .artifacts" in (ROOT / "docs/ci/review-job.sh").read_text()
    for written in (
        "python3.11 -m venv .venv",
        "python3.11 -m venv .pex-tool",
        "--output-file dist/runner/witness-gate.pex",
        "> .witness-gate/changed.txt",
    ):
        assert written in runs, written
    (tmp_path / ".gitignore").write_text(guide_blocks("advice")[".gitignore"])
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)

    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=tmp_path).returncode == 0

    kept_out = [
        ".pants-bootstrap/pex",
        ".pants.d/run-tracker/x",
        ".pids/abc/pantsd/pid",
        "dist/runner/witness-gate.pex",
        ".venv/bin/python",
        ".pex-tool/bin/pex",
        ".artifacts/review/review.json",
        "bazel-out",
        "bazel-ledger",
        ".witness-gate/changed.txt",
        "src/ledger/__pycache__/balance.cpython-311.pyc",
    ]
    assert [path for path in kept_out if not ignored(path)] == []
    committed = [
        ".witness-gate/freezes/prop.json",
        ".witness-gate/corpus/witness.json",
        "tests/.witness-gate/freezes/prop.json",
        "3rdparty/python/default.lock",
        "src/ledger/balance.py",
        "pants",
        "BUILD",
        ".bazelrc",
        ".bazelversion",
    ]
    assert [path for path in committed if ignored(path)] == []


def test_the_guides_bazelrc_undoes_debians_sandbox_debug():
    machine = Path("/etc/bazel/bazelrc")
    if not machine.is_file():
        missing("Debian's bazel-bootstrap (its /etc/bazel/bazelrc) is not installed")
    assert "build --sandbox_debug" in machine.read_text().splitlines()
    assert "build --nosandbox_debug" in guide_blocks("bazel-file")[".bazelrc"].splitlines()
    assert "build --nosandbox_debug" in (ROOT / ".bazelrc").read_text().splitlines()  # as this repository's own


def test_the_guides_bazelversion_names_the_bazel_the_rules_are_tested_on():
    # Bazelisk (GitHub's `bazel`) runs the version the file names; the rules' tests run on
    # the Bazel that bazel/bootstrap installs, Debian's bazel-bootstrap.
    bootstrap = subprocess.run([str(ROOT / "bazel/bootstrap")], capture_output=True, text=True)
    if bootstrap.returncode != 0:
        missing(f"Bazel is not available: {bootstrap.stderr.strip()}")
    [pinned] = guide_blocks("bazel-file")[".bazelversion"].splitlines()
    assert bootstrap.stdout.startswith(f"bazel-bootstrap {pinned}+"), bootstrap.stdout  # Debian's 4.2.3+ds-9
    assert f"tested on {pinned}" in guide() and f"tested on {pinned}" in (ROOT / "docs/ci/review-job.sh").read_text()
    # Debian's `bazel` wrapper reads the file too: it runs the binary named for the version.
    assert f"ln -s bazel-4 /usr/bin/bazel-{pinned}" in guide() and os.access(f"/usr/bin/bazel-{pinned}", os.X_OK)
