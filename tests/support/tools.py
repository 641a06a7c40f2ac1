"""A tool a test needs that this machine lacks: a skip on a developer's machine, a failure
in CI.

CI (`.ci/run`, CI=true, passed to the tests by pants.toml's [test].extra_env_vars)
installs every tool the suites use, so a missing one there is a broken install step, not a
reason to report a whole area green."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI is set: a missing tool fails the suite instead of skipping it)", pytrace=False)
    pytest.skip(reason)
