"""docs/targets.md is what the plugin's declarations render to now."""

from __future__ import annotations

import target_pages


def test_target_reference_is_current():
    assert target_pages.main(["--check"]) == 0, "run: PYTHONPATH=rules $WITNESS_GATE_PANTS_PYTHON docs/target_pages.py"
