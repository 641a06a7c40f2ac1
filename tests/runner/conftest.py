"""Shared fixtures: the real CLI on a copy of the orders example (see support.sample_repo)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.sample_repo import EXAMPLE, Run, SampleRepo, add_flaky_property, copy_example

__all__ = ["EXAMPLE", "Run", "SampleRepo", "add_flaky_property", "copied", "copy_example", "repo"]


@pytest.fixture
def repo(tmp_path: Path) -> SampleRepo:
    return copy_example(tmp_path / "orders")


def copied(prepared: SampleRepo, target: Path) -> SampleRepo:
    """A test's own copy of a repository its module prepared once (pinned, checked and
    classified: work each test would otherwise repeat), to read and change as it likes."""
    shutil.copytree(prepared.root, target, symlinks=True)
    return SampleRepo(target)
