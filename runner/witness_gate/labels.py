"""The labels and the verdict (spec sections 3 and 4): pure functions of counts and path flags.

These rows are policy. `classify` follows the spec's table exactly, and the exit
status of a whole run is the most severe of its labels.
"""

from __future__ import annotations

from collections.abc import Iterable

from witness_gate.evidence import CONTROLLED

LABELS = ("regression", "flake", "oracle_defect", "mixed_edit", "not_reproduced", "unclassified")

NEXT_STEPS = {
    "regression": "Block the patch. Do not write a freeze file.",
    "flake": "A freeze bound to the assertion, the fixture digest and the witness hash may be written.",
    "oracle_defect": "Open a separate oracle review. No freeze on the implementation ticket.",
    "mixed_edit": "Block. Split the diff before classification is trusted.",
    "not_reproduced": "Not a pass: this witness no longer shows the failure; investigate before declaring it gone. No "
    "freeze.",
    "unclassified": "Not a pass: the evidence is incomplete; fix the pin or the changed-file list and classify again.",
}

# A flake whose failures follow nothing the runner holds fixed from one run to the next (the
# clock, threads, the OS, the memory layout and collector timing the search met) can end
# the next run's search on another payload: a freeze binds one witness hash.
UNREPEATABLE_FLAKE = (
    "Its cause is nothing the runner holds fixed from run to run, so the next run's search may keep a different "
    "witness, "
    "which a freeze of this one would not cover; a rare flake of this kind belongs on the suite's ordinary retry "
    "policy."
)


def next_step(label: str, cause: str) -> str:
    """What a reviewer does with a labelled witness; for a flake, whether a freeze of it
    can hold beyond this run (pure)."""
    return NEXT_STEPS[label] + (freeze_caveat(cause) if label == "flake" else "")


def freeze_caveat(cause: str) -> str:
    """What to add to a flake's next step: nothing where the runner controls its cause (the
    next run keeps the same witness), the warning otherwise (pure)."""
    return "" if cause in CONTROLLED else f" {UNREPEATABLE_FLAKE}"


EXIT_PASS, EXIT_BLOCKED, EXIT_BAD_INPUT, EXIT_ORACLE_REVIEW, EXIT_INCOMPLETE = 0, 1, 2, 3, 4

_EXIT_BY_LABEL = {
    "flake": EXIT_PASS,
    "regression": EXIT_BLOCKED,
    "mixed_edit": EXIT_BLOCKED,
    "oracle_defect": EXIT_ORACLE_REVIEW,
    "not_reproduced": EXIT_INCOMPLETE,
    "unclassified": EXIT_INCOMPLETE,
}
# Bad input (2) is raised, never computed; among computed statuses 1 > 3 > 4 > 0.
_SEVERITY = {EXIT_PASS: 0, EXIT_INCOMPLETE: 1, EXIT_ORACLE_REVIEW: 2, EXIT_BLOCKED: 3}
VERDICTS = {
    EXIT_PASS: "pass",
    EXIT_BLOCKED: "blocked",
    EXIT_ORACLE_REVIEW: "oracle_review",
    EXIT_INCOMPLETE: "incomplete",
}


def classify(failures: int, runs: int, impl_changed: bool, oracle_changed: bool) -> str:
    if runs < 1 or failures < 0 or failures > runs:
        return "unclassified"
    if impl_changed and oracle_changed:
        return "mixed_edit"
    if oracle_changed and not impl_changed:
        return "oracle_defect"
    if failures == runs:
        return "regression"
    if failures == 0:
        return "not_reproduced"
    return "flake"


def freeze_allowed(kind: str, witness_present: bool, digest_matches: bool) -> bool:
    return bool(witness_present and digest_matches and kind == "flake")


def run_exit_code(labels: Iterable[str], mixed_diff: bool, lock_changed: bool) -> int:
    """The exit status of a classify run: the most severe label wins."""
    return _most_severe([_EXIT_BY_LABEL[label] for label in labels], mixed_diff or lock_changed)


def gate_exit_code(outcomes: Iterable[tuple[str, bool]], diff_blocks: bool) -> int:
    """The exit status of a gate run from (label, frozen) pairs: a flake passes only
    when a valid freeze covers it; every other label keeps its classify status."""
    return _most_severe(
        [EXIT_BLOCKED if label == "flake" and not frozen else _EXIT_BY_LABEL[label] for label, frozen in outcomes],
        diff_blocks,
    )


def _most_severe(codes: list[int], blocked: bool) -> int:
    if blocked:
        codes.append(EXIT_BLOCKED)
    return most_severe(codes)


def most_severe(codes: Iterable[int]) -> int:
    """The most severe of computed exit statuses (0 when there are none)."""
    return max(codes, key=_SEVERITY.__getitem__, default=EXIT_PASS)
