"""The flake catalogue's state-dependent classes and deterministic controls (flake_cases/,
see its catalogue.py), through the real CLI exactly as flake_catalogue_test.py runs its
nondeterministic classes: a state-dependent class is a `regression` that rests on its
history, a control a `regression` whatever is varied, each with its exact cause in every run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import flake_catalogue_test as catalogue_test

STATE_AND_CONTROLS = [case for case in catalogue_test.CASES if case.kind in ("state", "control")]


@pytest.mark.parametrize("case", STATE_AND_CONTROLS, ids=[case.name for case in STATE_AND_CONTROLS])
def test_each_state_class_and_control_gets_its_label(case: catalogue_test.Case, tmp_path: Path):
    catalogue_test.assert_gets_its_label(case, tmp_path, again=catalogue_test.REPEATED.get(case.cause) == case.name)
