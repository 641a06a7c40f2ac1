"""Shared fixtures: the real CLI on a copy of the orders example (see support.sample_repo)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.sample_repo import EXAMPLE, Run, SampleRepo, add_flaky_property, copy_example

__all__ = ["EXAMPLE", "Run", "SampleRepo", "add_flaky_property", "repo"]


@pytest.fixture
def repo(tmp_path: Path) -> SampleRepo:
    return copy_example(tmp_path / "orders")
