"""A tool a test needs that this machine lacks: a skip on a developer's machine, a failure
in CI.

CI (`.ci/run`, CI=true, passed to the tests by pants.toml's [test].extra_env_vars)
installs every tool the suites use, so a missing one there is a broken install step, not a
reason to report a whole area green."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI is set: a missing tool fails the suite instead of skipping it)", pytrace=False)
    pytest.skip(reason)


def without_namespaces(tmp_path: Path) -> tuple[str, ...]:
    """A launcher under which this machine's bubblewrap cannot create namespaces: a private
    mount namespace where /usr/bin/bwrap is a stand-in that says what a kernel without
    unprivileged user namespaces says. Needs root (CI runs as root)."""
    if os.geteuid() != 0:
        missing("hiding bwrap needs a mount namespace of its own: run as root")
    refusal = tmp_path / "bwrap"
    refusal.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    refusal.chmod(0o755)
    bwrap = shutil.which("bwrap", path=f"{os.environ.get('PATH', '')}:/usr/local/bin:/usr/bin:/bin")
    if bwrap is None:
        missing("bubblewrap is not installed (Debian: apt-get install bubblewrap)")
    return (
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        f'mount --bind "$0" {bwrap} && exec "$@"',
        str(refusal),
    )
