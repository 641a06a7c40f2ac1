"""The `freeze` command: a freeze is written only once its witness, replayed where it was
found, confirms the report it is bound to (the same counts wherever the runner controls the
cause, and a flake); the report's word is not enough.

A gate's flake replays in the working tree the gate ran in (`--root`), with the import
paths the report was replayed with. A review's flake is a flake of the head's
implementation under the base's oracle. A checkout of the base holds the base's
implementation, where that witness may never fail; the head's checkout holds the head's
oracle too. So `freeze --review` rebuilds the suite's tree exactly as `review` assembled it
(the base commit, with the head's implementation paths as the head would land), from git
objects of this repository, and nothing the artifacts say is taken on their word:
review.json's merged tree is recomputed from its base and head, the report must have been
made from the changed-path list of that merge, the implementation paths are re-derived from
the base's declarations, and the lock must pin the base's own fixture blob. A review whose
change edits an oracle path has no flake to freeze.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from witness_gate import classification, git, sandbox, selection
from witness_gate import freeze as freezes
from witness_gate import lock as locks
from witness_gate import review as reviews
from witness_gate import verify as verifier
from witness_gate import witness as witnesses
from witness_gate.canonical import sha256_hex
from witness_gate.config import GateConfig, Suite, load_config
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import own
from witness_gate.paths import gate_list


@dataclass(frozen=True)
class Flake:
    """The flake a freeze is asked for: its assertion, its witness file, the counts classify
    recorded for it, and how long the freeze lasts."""

    assertion: str
    witness: Path
    failures: int
    runs: int
    expires_in_hours: int


@dataclass(frozen=True)
class Found:
    """Where the flake was found, as the command says it: a gate's lock and report (None:
    the default under .artifacts), run in `root`'s working tree; or a review's --out
    directory, its `suite` and the base's suites document (`suites`), rebuilt from `root`'s
    git objects."""

    root: Path
    lock: Path | None
    report: Path | None
    review: Path | None
    suite: str | None
    suites: Path | None


def confirmed(flake: Flake, found: Found) -> dict[str, Any]:
    """The freeze record of `flake`, once a replay of its witness where it was found agrees
    with the report; a refusal, naming what disagrees, otherwise."""
    lock_path, report_path, artifacts = _bound_to(found, flake.witness)
    lock = locks.load(lock_path)
    if artifacts is None:  # the working tree's fixture first: a moved one says re-pin, before any report is read
        locks.verify_fixture(lock, found.root)
    witness, report = witnesses.read(flake.witness), classification.load_report(report_path, lock)
    with tempfile.TemporaryDirectory(prefix="witness-gate-freeze-") as scratch:
        if artifacts is not None:
            assert found.suite is not None  # --review without --suite is refused in `_bound_to`
            rebuilt = rebuild(found.root, artifacts.review, found.suite, report, lock, found.suites, Path(scratch))
            tree, config, provided = rebuilt.tree, rebuilt.config, rebuilt.provided
        else:
            # Replay with what the report was replayed with (a gate under Pants passes its
            # source roots; no pyproject.toml says them), never with a guess.
            tree, config, provided = (
                found.root,
                replace(load_config(found.root), import_paths=tuple(report["import_paths"])),
                {},
            )
        record = freezes.build(
            flake.assertion,
            lock,
            witness,
            report,
            flake.failures,
            flake.runs,
            flake.expires_in_hours,
            config.max_freeze_hours,
            datetime.now(timezone.utc),
            str(flake.witness),
        )
        [entry] = [e for e in report["witnesses"] if e["witness_hash"] == witness.witness_hash]
        with sandbox.providing(provided):
            replayed = verifier.replay_witness(witness, flake.witness.name, lock, tree, config)
    agreed = verifier.replay_check(flake.witness.name, entry, replayed, report["diff"])
    if not agreed.ok:
        raise WitnessGateError(
            f"{flake.witness}: replaying the witness does not confirm the report: {agreed.detail}; no freeze"
        )
    return record


def _bound_to(found: Found, witness: Path) -> tuple[Path, Path, Artifacts | None]:
    """The lock and report the freeze is bound to, and a review's artifacts (None for a gate's)."""
    if found.review is None and (found.suite is not None or found.suites is not None):
        raise WitnessGateError("--suite and --suites go with --review (a review's artifacts)")
    if found.review is None:
        return (
            found.lock or Path(".artifacts/fixture.lock"),
            found.report or Path(".artifacts/classification.json"),
            None,
        )
    if found.suite is None or found.lock is not None or found.report is not None:
        raise WitnessGateError(
            "--review takes --suite and no --lock or --report: the suite's own lock and report are used"
        )
    artifacts = suite_artifacts(found.review, found.suite, witness)
    return artifacts.lock, artifacts.report, artifacts


@dataclass(frozen=True)
class ReviewedTree:
    """The suite's tree as the review ran it, and the configuration it ran with."""

    tree: Path
    suite: Suite
    config: GateConfig  # the base's, with the import paths the suite's gate replayed with
    provided: dict[str, Path]  # what the workers are shown besides the tree (the code's dependencies)


def _commit(repo: Path, sha: str, role: str) -> str:
    try:
        return git.commit(repo, sha, role)
    except WitnessGateError:
        raise WitnessGateError(
            f"the review's {role} {sha} is not in this repository: fetch it first (git fetch origin {sha})"
        ) from None


def rebuild(
    repo: Path,
    review: dict[str, Any],
    suite_name: str,
    report: dict[str, Any],
    lock: dict[str, Any],
    suites_document: Path | None,
    scratch: Path,
) -> ReviewedTree:
    """The suite's tree under `scratch`, checked against the artifacts (`review`: review.json,
    `report` and `lock`: the suite's classification.json and fixture.lock); refuses, naming
    what disagrees, when any of them is not what this base and head give."""
    if review["merged_tree"] is None:
        raise WitnessGateError(
            "review.json: the head did not merge into the base: that review ran no suite, so it found no flake"
        )
    base, head = _commit(repo, review["base"], "base"), _commit(repo, review["head"], "head")
    landed = git.merge(repo, base, head)
    if landed.tree != review["merged_tree"]:
        raise WitnessGateError(
            f"review.json: /merged_tree {review['merged_tree']} is not what its base and head merge to "
            f"({landed.tree or 'a conflict'}): these artifacts are not that review's"
        )
    changes = git.changes(repo, base, landed.tree)
    paths = [change.path for change in changes]
    if sha256_hex(gate_list(paths)) != report["diff"]["paths_sha256"]:
        raise WitnessGateError(
            "classification.json: /diff/paths_sha256: the report was not made from this review's changed paths"
        )
    config = reviews._base_config(repo, base, base, suites_document)
    base_tree = scratch / "base"
    git.export(repo, base, base_tree)
    config = reviews.with_imported_helpers(base_tree, config)
    ownership = own(
        paths,
        config,
        reviews._symlinked_oracle(base_tree, config),
        reviews._gated_build_files(repo, (base, landed.tree), paths),
    )
    if ownership.oracle:
        shown = ", ".join(sorted(ownership.oracle)[:3])
        raise WitnessGateError(
            f"the reviewed change edits oracle paths ({shown}): its witnesses are an oracle review's or a mixed "
            "edit's, never a flake to freeze"
        )
    if list(ownership.impl) != review["implementation_paths"]:
        raise WitnessGateError(
            "review.json: /implementation_paths is not what the base declares of this change: these artifacts are not "
            "that review's"
        )
    suite = next((s for s in config.suites if s.name == suite_name), None)
    if suite is None:
        raise WitnessGateError(
            f"--suite {suite_name!r}: the base declares no such suite ({', '.join(s.name for s in config.suites)})"
        )
    fixture = (
        b"" if suite.fixture is None else git.read_file(repo, base, suite.fixture)
    )  # none declared: the digest of no bytes
    if lock["fixture"]["path"] != suite.fixture or fixture is None or sha256_hex(fixture) != lock["fixture"]["sha256"]:
        raise WitnessGateError(
            f"fixture.lock: /fixture: does not pin the base's {suite.fixture or 'declaration without fixture data'} "
            "(sha256 of the base's blob)"
        )
    by_path = {change.path: change for change in changes}
    linked = selection.symlinked_closure(base_tree, config)
    tree = scratch / "suite"
    git.export(repo, base, tree, selection.closure_only(suite, config, linked))
    problems = reviews._apply_head(repo, landed.tree, tree, ownership, by_path, selection.reaching(suite, linked))
    if problems:
        raise WitnessGateError(f"the head's implementation could not be put in the suite's tree: {problems[0]}")
    config, provided = reviews._with_dependencies(repo, base, config, scratch / "dependencies")
    config = reviews.suite_config(suite, config)
    if list(config.import_paths) != report["import_paths"]:
        raise WitnessGateError(
            "classification.json: /import_paths is not what the review replayed with: these artifacts are not that "
            "review's"
        )
    return ReviewedTree(tree, suite, config, provided)


@dataclass(frozen=True)
class Artifacts:
    """The files a freeze is bound from: a suite's gate directory under a review's --out."""

    lock: Path
    report: Path
    review: dict[str, Any]


def suite_artifacts(review_dir: Path, suite_name: str, witness_path: Path) -> Artifacts:
    """The suite's lock and report under `review_dir`, after checking that the suite ran
    there and that the witness is one of its own."""
    from witness_gate import store

    review = store.load_artifact(review_dir / "review.json", "review")
    if review["suites"].get(suite_name, "unaffected") == "unaffected" or "/" in suite_name or suite_name in (".", ".."):
        ran = ", ".join(name for name, verdict in review["suites"].items() if verdict != "unaffected") or "none"
        raise WitnessGateError(
            f"--suite {suite_name!r}: no suite of that name ran in {review_dir / 'review.json'} (ran: {ran})"
        )
    gate_dir = review_dir / suite_name
    if witness_path.parent.resolve() != (gate_dir / "witnesses").resolve():
        raise WitnessGateError(
            f"{witness_path}: --witness must be a file of {gate_dir / 'witnesses'}, the suite's own witnesses"
        )
    return Artifacts(gate_dir / "fixture.lock", gate_dir / "classification.json", review)
