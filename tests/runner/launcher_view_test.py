"""Where the launcher puts the view of what a root runner's workers read (`launcher.view_root`)."""

from __future__ import annotations

import pytest

from witness_gate import launcher


def test_the_view_goes_where_no_source_lies_above_it():
    assert launcher.view_root(["/root/.pyenv/versions/3.11.7", "/tmp/review/suite-0"]) == "/tmp"
    assert launcher.view_root(["/tmp", "/usr/lib"]) == "/run"  # a bind of /tmp would carry the view along
    assert launcher.view_root(["/tmp", "/run"]) == "/mnt"
    assert launcher.view_root(["/tmp", "/run/x"]) == "/run"  # below it is no matter: opened before it is covered
    assert launcher.view_path("/tmp", 3) == "/tmp/3"


def test_sources_above_every_place_are_refused():
    with pytest.raises(OSError, match="every place for the worker's view lies inside a path it reads"):
        launcher.view_root(["/"])
