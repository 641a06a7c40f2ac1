"""Freezes (spec section 4): a short, hashed silence for one flake witness.

A freeze is allowed only for `flake`, only with the witness on disk under the same
fixture digest, and only for the counts `classify` itself recorded for that hash.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from witness_gate import store
from witness_gate.labels import classify, freeze_allowed
from witness_gate.errors import WitnessGateError

if TYPE_CHECKING:  # for its type only: importing this module loads no witness machinery, as before
    from witness_gate.witness import Witness

SCHEMA_VERSION = 1
# The expiry the printed freeze commands propose (within the configured maximum): a day
# is long enough to fix a flake's cause and short enough that it comes back to a person.
SUGGESTED_HOURS = 24


def command(gate_dir: Path, row: dict[str, Any], freezes_dir: str, hours: int) -> str:
    """The command that writes the freeze of a flake a gate found, from that gate's
    artifacts in `gate_dir` (a gate record's row), into `freezes_dir` (pure)."""
    name = row["file"].rsplit("/", 1)[-1]
    return shlex.join(
        [
            "witness-gate",
            "freeze",
            "--assertion",
            row["assertion_id"],
            "--lock",
            str(gate_dir / "fixture.lock"),
            "--witness",
            str(gate_dir / row["file"]),
            "--report",
            str(gate_dir / "classification.json"),
            "--failures",
            str(row["failures"]),
            "--runs",
            str(row["runs"]),
            "--expires-in-hours",
            str(hours),
            "--out",
            f"{freezes_dir.rstrip('/')}/{name}",
        ]
    )


# The runner as a repository with a `pants` launcher runs it (docs/adopt.md: a `pex_binary`
# named witness-gate at the root), and as anything else does (the pinned install). A base
# with the pull-request job (docs/ci/review-job.sh at JOB_PATH) freezes with the job's own
# runner, installed by the job's pins: a lock pins its Hypothesis version, and a runner with
# another one refuses to replay it (the repository's own resolve may well hold another).
PANTS_RUNNER = ("./pants", "run", ":witness-gate", "--")
PLAIN_RUNNER = ("witness-gate",)
JOB_PATH = ".ci/witness-gate-review.sh"
_JOB_VENV = '"$HOME/.cache/witness-gate/job-runner"'
JOB_RUNNER = (f'{_JOB_VENV[:-1]}/bin/witness-gate"',)
_JOB_RUNNER_STEPS = [
    f"sed -n \"/<<'PINS'\\$/,/^PINS\\$/{{/<<'PINS'\\$/d;/^PINS\\$/d;p}}\" {JOB_PATH} "
    ">.artifacts/runner-requirements.txt  # the job's pins",
    f"python3.11 -m venv --clear {_JOB_VENV}",
    f'{_JOB_VENV[:-1]}/bin/pip" install --quiet --require-hashes --only-binary :all: --no-deps '
    '${WITNESS_GATE_INDEX_URL:+--index-url "$WITNESS_GATE_INDEX_URL"} -r .artifacts/runner-requirements.txt  # the '
    "job's runner, by sha256",
]


@dataclass(frozen=True)
class ReviewFreeze:
    """Where a review's flake may be frozen from: the review's --out as the job wrote it,
    and what the base declares its suites with (None: pyproject.toml; else the command
    that prints the build graph's document)."""

    review_dir: str
    base: str
    head: str
    runner: tuple[str, ...]
    suites_goal: str | None


SUITES_FILE = ".artifacts/suites.json"


def review_command(where: ReviewFreeze, suite: str, row: dict[str, Any], freezes_dir: str, hours: int) -> str:
    """The command that writes the freeze of a flake a review found, from the review's
    artifacts, in any checkout holding the base and head commits (pure)."""
    name = row["file"].rsplit("/", 1)[-1]
    suites = ["--suites", SUITES_FILE] if where.suites_goal is not None else []
    runner = (
        " ".join(where.runner) if where.runner == JOB_RUNNER else shlex.join(where.runner)
    )  # the job's is shell words
    return (
        runner
        + " "
        + shlex.join(
            [
                "freeze",
                "--review",
                where.review_dir,
                "--suite",
                suite,
                *suites,
                "--assertion",
                row["assertion_id"],
                "--witness",
                f"{where.review_dir.rstrip('/')}/{suite}/{row['file']}",
                "--failures",
                str(row["failures"]),
                "--runs",
                str(row["runs"]),
                "--expires-in-hours",
                str(hours),
                "--out",
                f"{freezes_dir.rstrip('/')}/{name}",
            ]
        )
    )


def review_steps(where: ReviewFreeze, command: str, freezes_dir: str, file: str) -> list[str]:
    """Every step from a checkout of the base to the freeze's pull request (pure)."""
    name = file.rsplit("/", 1)[-1]
    steps = [
        f"git fetch origin {where.head}  # the reviewed head: the freeze replays its witness in the tree the review "
        "judged",
    ]
    if where.suites_goal is not None:
        steps.append(where.suites_goal.replace("<file>", SUITES_FILE) + "  # the base's suites, printed by the base")
    if where.runner == JOB_RUNNER:
        steps += _JOB_RUNNER_STEPS
    steps += [
        command,
        f"git switch -c witness-gate-freeze-{name.rsplit('.', 2)[-2]} {where.base}",
        f"git add {shlex.quote(freezes_dir.rstrip('/') + '/' + name)} "
        f"&& git commit -m {shlex.quote('Freeze the flake ' + name)}",
    ]
    return steps


def timestamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def later_moment(text: str, now: datetime) -> datetime:
    """A time given on the command line to look ahead to: ISO 8601 with its zone (Z or
    +hh:mm), not before `now` (a freeze is never checked at an earlier time)."""
    try:
        moment = parse_timestamp(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise WitnessGateError(f"--as-of {text!r} is not a time with its zone (ISO 8601, e.g. 2026-12-07T09:00:00Z)")
    try:
        timestamp(moment)  # in UTC, as every time the runner prints
    except OverflowError:
        raise WitnessGateError(f"--as-of {text!r} is out of range in UTC") from None
    if moment < now:
        raise WitnessGateError(
            f"--as-of {timestamp(moment)} is before now ({timestamp(now)}): freezes are checked now or later, never "
            "earlier"
        )
    return moment


def build(
    assertion_id: str,
    lock: dict[str, Any],
    witness_record: Witness,
    report: dict[str, Any],
    failures: int,
    runs: int,
    expires_in_hours: int,
    max_hours: int,
    now: datetime,
    witness_name: str,
) -> dict[str, Any]:
    """The freeze record, or a refusal saying which binding does not hold (naming the
    witness file as `witness_name`)."""
    if not 1 <= expires_in_hours <= max_hours:
        raise WitnessGateError(
            f"--expires-in-hours must be between 1 and {max_hours} (the configured maximum), got {expires_in_hours}"
        )
    if witness_record.assertion_id != assertion_id:
        raise WitnessGateError(
            f"{witness_name}: witness is for assertion {witness_record.assertion_id!r}, not {assertion_id!r}"
        )
    digest_matches = witness_record.fixture_digest == lock["fixture"]["sha256"]
    if not digest_matches:
        raise WitnessGateError(
            f"{witness_name}: /fixture_digest: witness of another fixture than the lock's: re-pin and re-check"
        )
    if failures == runs:
        raise WitnessGateError(
            f"failures == runs ({failures}): that is a regression, not a flake (caller bug); no freeze"
        )
    kind = classify(failures, runs, report["diff"]["impl_changed"], report["diff"]["oracle_changed"])
    if kind != "flake":
        raise WitnessGateError(
            f"--failures {failures} --runs {runs} under this diff give {kind!r}: only a flake may be frozen"
        )
    recorded = [e for e in report["witnesses"] if e["witness_hash"] == witness_record.witness_hash]
    if not recorded:
        raise WitnessGateError(
            f"{witness_name}: the classification report has no entry for this witness hash: classify first"
        )
    entry = recorded[0]
    if (entry["failures"], entry["runs"]) != (failures, runs):
        raise WitnessGateError(
            f"{witness_name}: --failures {failures} --runs {runs} disagree with classify's record "
            f"{entry['failures']}/{entry['runs']} for this witness"
        )
    if entry["label"] != "flake" or not freeze_allowed(kind, witness_present=True, digest_matches=digest_matches):
        raise WitnessGateError(f"label is {entry['label']!r}: only a flake may be frozen")
    return {
        "schema_version": SCHEMA_VERSION,
        "assertion_id": assertion_id,
        "fixture_digest": lock["fixture"]["sha256"],
        "witness_hash": witness_record.witness_hash,
        "failures": failures,
        "runs": runs,
        "created_at": timestamp(now),
        "expires_at": timestamp(now + timedelta(hours=expires_in_hours)),
    }


def problems(
    freeze: dict[str, Any],
    lock: dict[str, Any],
    report: dict[str, Any],
    now: datetime,
    max_hours: int,
    as_of: datetime | None = None,
) -> list[str]:
    """What makes a (schema-valid) freeze unusable now, or by `as_of` when that is later;
    empty when it holds.

    A freeze file carries no signature, so its times are checked too: a hand-written
    freeze cannot live longer than `freeze` would have allowed, nor start in the future
    (the real now, whatever `as_of` says: looking ahead may only find more problems)."""
    found = []
    created, expires = parse_timestamp(freeze["created_at"]), parse_timestamp(freeze["expires_at"])
    if expires <= now:
        found.append(f"expired at {freeze['expires_at']}")
    elif as_of is not None and expires <= as_of:
        found.append(f"expires at {freeze['expires_at']}, before {timestamp(as_of)}")
    if expires <= created:
        found.append("expires before it was created")
    elif expires - created > timedelta(hours=max_hours):
        found.append(f"lives longer than the {max_hours}-hour maximum")
    if created > now:
        found.append(f"created in the future ({freeze['created_at']})")
    if freeze["failures"] >= freeze["runs"]:
        found.append(f"failures == runs ({freeze['failures']}/{freeze['runs']}) is a regression, not a flake")
    if freeze["fixture_digest"] != lock["fixture"]["sha256"]:
        found.append("bound to another fixture digest")
    entries = [
        e
        for e in report["witnesses"]
        if e["witness_hash"] == freeze["witness_hash"] and e["assertion_id"] == freeze["assertion_id"]
    ]
    if not entries:
        found.append("points at no classified witness of that assertion and hash")
    elif entries[0]["label"] != "flake":
        found.append(f"points at a witness labelled {entries[0]['label']}, not flake")
    return found


def load(path: Path) -> dict[str, Any]:
    return store.load_artifact(path, "freeze")
