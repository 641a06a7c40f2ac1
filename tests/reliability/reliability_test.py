"""The reliability figures of bench/reliability.py, at CI scale: each must be clean. The bad
inputs are bad_inputs_test.py's (a target of their own: the longest figure)."""

from __future__ import annotations

from pathlib import Path

import reliability
from support.figures import assert_clean
from support.tools import missing


def test_fuzzed_artifacts_never_crash_a_reader_nor_pass_invalid(tmp_path: Path):
    assert_clean(reliability.fuzz(tmp_path, cases=100, seed=7))


def test_a_kill_inside_every_write_window_never_leaves_a_torn_artifact(tmp_path: Path):
    """Certain, not lucky: an LD_PRELOAD shim (bench/crash_shim.c, compiled here with cc;
    no compiler fails the test in CI, and skips it elsewhere) stops pin, check, classify, freeze, gate and review inside
    every write of every artifact (mid-write, and just before and after each rename) while
    a reader looks, and each is killed with SIGKILL inside one. A write in place is caught
    torn (the figure's own control case checks that on every run)."""
    try:
        shim = reliability.build_shim(tmp_path)
    except reliability.NoCompiler as error:
        missing(str(error))
    assert_clean(reliability.crash_windows(tmp_path, shim))


def test_concurrent_runs_agree_with_a_serial_run(tmp_path: Path):
    assert_clean(reliability.concurrency(tmp_path, rounds=1))


def test_no_bypass_turns_a_regression_green(tmp_path: Path):
    assert_clean(reliability.bypass_attempts(tmp_path))


def test_artifacts_are_never_code(tmp_path: Path):
    assert_clean(reliability.code_from_data(tmp_path))
