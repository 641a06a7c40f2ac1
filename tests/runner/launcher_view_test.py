"""Where the launcher puts the view of what a root runner's workers read (`launcher.view_root`)."""

from __future__ import annotations

import pytest

from pathlib import Path

from witness_gate import launcher, sandbox
from witness_gate.errors import SetupFailed


def test_the_view_goes_where_no_source_lies_above_it():
    assert launcher.view_root(["/root/.pyenv/versions/3.11.7", "/tmp/review/suite-0"]) == "/tmp"
    assert launcher.view_root(["/tmp", "/usr/lib"]) == "/run"  # a bind of /tmp would carry the view along
    assert launcher.view_root(["/tmp", "/run"]) == "/mnt"
    assert launcher.view_root(["/tmp", "/run/x"]) == "/run"  # below it is no matter: opened before it is covered
    assert launcher.view_path("/tmp", 3) == "/tmp/3"


def test_sources_above_every_place_are_refused():
    with pytest.raises(OSError, match="every place for the worker's view lies inside a path it reads"):
        launcher.view_root(["/"])


def test_a_root_runner_that_finds_no_place_for_the_view_refuses_in_one_line():
    # A tree under test at / (a runner started there) leaves no place: a setup failure (exit
    # 2, "setup failed: ..."), never a traceback or a verdict.
    account = sandbox._Account(0x70000001, ())
    with pytest.raises(SetupFailed, match="^setup failed: cannot confine a worker: every place for the worker's view"):
        sandbox._confined("/usr/bin/bwrap", [(Path("/"), Path("/"))], Path("/"), None, ["true"], account, {})
