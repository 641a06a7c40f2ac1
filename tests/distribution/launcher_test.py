"""The README's two commands do all the set-up on this project's machines: the `./pants`
launcher, on a Linux machine without bubblewrap or libfaketime, installs Debian's
`bubblewrap` and `libfaketime` as root with apt-get (as bazel/bootstrap installs Bazel) and
says so; not root, it stops before any work, naming the one command to run.

apt-get is a stand-in on PATH that records its arguments and puts a `bwrap` on PATH, and
dpkg-query one that says whether libfaketime is installed, as the packages would: the real
ones need Debian's servers and find both installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.commands import path_without
from support.tools import missing

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "apt-get install -y --no-install-recommends bubblewrap"


@pytest.fixture
def launcher() -> Iterator[Path]:
    """A copy of ./pants alone in a directory every user can read (no pants.toml beside it:
    a launcher that gets past its checks stops at the first thing it reads)."""
    directory = Path(tempfile.mkdtemp(prefix="launcher-", dir="/tmp"))
    try:
        directory.chmod(0o755)
        shutil.copy2(ROOT / "pants", directory / "pants")
        (directory / "pants").chmod(0o755)
        yield directory / "pants"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run(launcher: Path, path: str, *prefix: str) -> subprocess.CompletedProcess:
    cache = launcher.parent / "cache"
    environment = {"PATH": path, "HOME": str(launcher.parent), "WITNESS_GATE_BOOTSTRAP_CACHE": str(cache)}
    return subprocess.run(
        [*prefix, str(launcher), "--version"],
        cwd=launcher.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_not_root_without_bubblewrap_the_launcher_stops_before_any_work_with_the_command(launcher: Path):
    if not shutil.which("setpriv"):
        missing("setpriv (util-linux) is not installed")
    path = path_without(launcher.parent / "bin", "bwrap", path="/usr/local/bin:/usr/bin:/bin")
    done = run(launcher, path, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"./pants: bubblewrap (bwrap), the sandbox of the runner's workers, is not installed; as root run: {INSTALL}"
    ], done.stderr
    assert sorted(p.name for p in launcher.parent.iterdir()) == ["bin", "pants"]  # no cache, no .pants-bootstrap


def test_as_root_without_bubblewrap_the_launcher_installs_debians_and_says_so(launcher: Path):
    if os.geteuid() != 0:
        missing("installing bubblewrap needs root (CI runs as root)")
    stand_in = launcher.parent / "apt"
    stand_in.mkdir()
    (stand_in / "apt-get").write_text(f"""#!/bin/sh
echo "$*" >> {stand_in}/calls
case "$*" in *install*bubblewrap*) printf '#!/bin/sh\\necho "bubblewrap 0.8.0"\\n' > {stand_in}/bwrap; chmod +x {stand_in}/bwrap;; esac
""")  # noqa: E501 (test data: a source file, as written)
    (stand_in / "apt-get").chmod(0o755)
    path = f"{stand_in}:" + path_without(
        launcher.parent / "bin", "bwrap", "apt-get", path="/usr/local/bin:/usr/bin:/bin"
    )
    done = run(launcher, path)
    lines = done.stderr.splitlines()
    assert lines[:2] == [
        f"./pants: bwrap is missing: installing Debian's bubblewrap (apt-get update, {INSTALL})",
        "./pants: installed bubblewrap 0.8.0 (Debian's bubblewrap)",
    ], done.stderr
    assert (stand_in / "calls").read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends bubblewrap",
    ]
    # Then it goes on as ever: here to the missing pants.toml beside the copy.
    assert done.returncode == 1 and "pants.toml has no [pex-cli] known_versions entry" in lines[-1], done.stderr
    # With bwrap there, it says nothing of bubblewrap.
    again = run(launcher, path)
    assert "bubblewrap" not in again.stderr, again.stderr
    assert len((stand_in / "calls").read_text().splitlines()) == 2  # apt-get not run again


def dpkg_query(directory: Path, installed: Path) -> None:
    """A dpkg-query on `directory` that says libfaketime is installed once `installed` exists."""
    (directory / "dpkg-query").write_text(f"""#!/bin/sh
if [ -e {installed} ]; then echo "install ok installed"; else echo "unknown ok not-installed"; fi
""")
    (directory / "dpkg-query").chmod(0o755)


def test_not_root_without_libfaketime_the_launcher_stops_before_any_work_with_the_command(launcher: Path):
    if not shutil.which("setpriv"):
        missing("setpriv (util-linux) is not installed")
    stand_in = launcher.parent / "dpkg"
    stand_in.mkdir()
    dpkg_query(stand_in, stand_in / "never")
    path = f"{stand_in}:" + path_without(launcher.parent / "bin", "dpkg-query", path="/usr/local/bin:/usr/bin:/bin")
    done = run(launcher, path, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "./pants: libfaketime, the wall clock of the runner's clock probe, is not installed; as root run: "
        "apt-get install -y --no-install-recommends libfaketime"
    ], done.stderr


def test_as_root_without_bubblewrap_or_libfaketime_the_launcher_installs_both_and_says_so(launcher: Path):
    if os.geteuid() != 0:
        missing("installing Debian's packages needs root (CI runs as root)")
    stand_in = launcher.parent / "apt"
    stand_in.mkdir()
    dpkg_query(stand_in, stand_in / "libfaketime-installed")
    (stand_in / "apt-get").write_text(f"""#!/bin/sh
echo "$*" >> {stand_in}/calls
case "$*" in *install*bubblewrap*) printf '#!/bin/sh\\necho "bubblewrap 0.8.0"\\n' > {stand_in}/bwrap; chmod +x {stand_in}/bwrap;; esac
case "$*" in *install*libfaketime*) touch {stand_in}/libfaketime-installed;; esac
""")  # noqa: E501 (test data: a source file, as written)
    (stand_in / "apt-get").chmod(0o755)
    path = f"{stand_in}:" + path_without(
        launcher.parent / "bin", "bwrap", "apt-get", "dpkg-query", path="/usr/local/bin:/usr/bin:/bin"
    )
    done = run(launcher, path)
    lines = done.stderr.splitlines()
    install = "apt-get install -y --no-install-recommends bubblewrap libfaketime"
    assert lines[:3] == [
        "./pants: bwrap and libfaketime are missing: installing Debian's bubblewrap libfaketime "
        f"(apt-get update, {install})",
        "./pants: installed bubblewrap 0.8.0 (Debian's bubblewrap)",
        "./pants: installed Debian's libfaketime",
    ], done.stderr
    assert (stand_in / "calls").read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends bubblewrap libfaketime",
    ]
    again = run(launcher, path)
    assert "libfaketime" not in again.stderr and "bubblewrap" not in again.stderr, again.stderr
