import pytest
from hypothesis import given
from hypothesis import strategies as st

from witness_gate.labels import (
    LABELS,
    NEXT_STEPS,
    UNREPEATABLE_FLAKE,
    classify,
    freeze_allowed,
    next_step,
    run_exit_code,
)


# The spec's own table, verbatim: classify(failures, runs, impl_changed, oracle_changed).
SPEC_ROWS = [
    (5, 5, True, False, "regression"),
    (2, 5, True, False, "flake"),
    (0, 5, True, False, "not_reproduced"),
    (5, 5, False, True, "oracle_defect"),
    (2, 5, True, True, "mixed_edit"),
    (3, 0, True, False, "unclassified"),
]


@pytest.mark.parametrize(
    "failures, runs, impl_changed, oracle_changed, label", SPEC_ROWS, ids=[row[-1] for row in SPEC_ROWS]
)
def test_classify_gives_the_spec_table_row(failures, runs, impl_changed, oracle_changed, label):
    assert classify(failures, runs, impl_changed, oracle_changed) == label


def test_the_spec_table_names_every_label_once():
    assert sorted(row[-1] for row in SPEC_ROWS) == sorted(LABELS)


@given(st.integers(-3, 20), st.integers(-3, 20), st.booleans(), st.booleans())
def test_classify_is_total_and_consistent_with_the_table(failures, runs, impl, oracle):
    label = classify(failures, runs, impl, oracle)
    assert label in LABELS
    if runs < 1 or not 0 <= failures <= runs:
        assert label == "unclassified"
    elif impl and oracle:
        assert label == "mixed_edit"
    elif oracle:
        assert label == "oracle_defect"
    else:
        assert label == {runs: "regression", 0: "not_reproduced"}.get(failures, "flake")
    if label == "flake":
        assert 0 < failures < runs and not oracle


@given(st.sampled_from(LABELS + ("", "FLAKE", "flake ")), st.booleans(), st.booleans())
def test_a_freeze_is_impossible_for_every_label_but_flake(kind, present, matches):
    assert freeze_allowed(kind, present, matches) == (kind == "flake" and present and matches)


def test_run_exit_code_takes_the_most_severe_label():
    assert run_exit_code([], mixed_diff=False, lock_changed=False) == 0
    assert run_exit_code(["flake", "flake"], False, False) == 0
    assert run_exit_code(["flake", "not_reproduced"], False, False) == 4
    assert run_exit_code(["unclassified", "oracle_defect"], False, False) == 3
    assert run_exit_code(["oracle_defect", "regression", "flake"], False, False) == 1
    assert run_exit_code([], mixed_diff=True, lock_changed=False) == 1
    assert run_exit_code(["flake"], mixed_diff=False, lock_changed=True) == 1


@pytest.mark.parametrize(
    "cause, holds",
    [("random_seed", True), ("hash_secret", True), ("history", True), ("time", False), ("none_found", False)],
)
def test_a_flake_says_whether_a_freeze_of_its_witness_can_hold_beyond_this_run(cause: str, holds: bool):
    # The search runs under the schedule: where the runner controls the cause, the next run
    # keeps the same witness; where it does not, the next witness may differ.
    step = next_step("flake", cause)
    assert step.startswith(NEXT_STEPS["flake"])
    assert (UNREPEATABLE_FLAKE in step) is not holds


def test_only_a_flake_gets_the_caveat():
    assert next_step("regression", "none_found") == NEXT_STEPS["regression"]
