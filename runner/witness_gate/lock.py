"""The fixture lock (spec section 1): the fixture pinned by its bytes.

A run without a lock, or whose fixture no longer matches it, stays unclassified.
The seed schedule is derived from the fixture digest and generator version alone,
so two machines pinning the same bytes search with the same seeds.
"""

from __future__ import annotations

import hashlib
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from witness_gate import store
from witness_gate.canonical import file_sha256
from witness_gate.errors import FixtureChanged, WitnessGateError
from witness_gate.paths import repo_path_problem

SCHEMA_VERSION = 2
DEFAULT_REPLAYS = 5
DEFAULT_MAX_EXAMPLES = 100
DEFAULT_SEARCH_ROUNDS = 1
# The replay plan: review constants stored in the lock, like the replay count.
DEFAULT_REPLAY_INTERPRETERS = 6  # per round: three hash secrets and three process ids round a ring (replay.plan_round)
DEFAULT_REPLAY_CAP = 150  # replays of one payload variant, escalation included
DEFAULT_REPLAY_SPACING_MS = 70  # between the slots of one interpreter
DEFAULT_HISTORY_LIMIT = 64  # calls kept as a witness's history
_SALT = re.compile(r"[0-9A-Za-z._-]{1,128}\Z")


def hypothesis_version() -> str:
    # Read from metadata: importing Hypothesis costs ~290 ms, and `pin` needs only the number.
    return metadata.version("hypothesis")


def relative_to_root(path: Path, root: Path, what: str) -> str:
    """The POSIX path of `path` relative to the repository root, or a refusal."""
    try:
        relative = path.absolute().relative_to(root.absolute())
    except ValueError:
        raise WitnessGateError(f"{path}: {what} is outside the repository root {root}") from None
    text = relative.as_posix()
    problem = repo_path_problem(text)
    if problem:
        raise WitnessGateError(f"{path}: {what} path {text!r}: {problem}")
    return text


def seed_schedule(
    fixture_digest: str, generator_version: int, rounds: int, search_salt: str | None = None
) -> list[int]:
    """The search seeds (pure): the fixed schedule of the pin, then, with a `search_salt` (one
    `review` draws at random when the base asks for a search per change), as many seeds more
    drawn from the salt too. The fixed schedule always runs first, so what it finds a salt
    cannot hide; the salt only adds inputs, and one the author cannot compute beforehand."""
    salts = [""] if search_salt is None else ["", f"\0{search_salt}"]
    seeds = []
    for salt in salts:
        for index in range(rounds):
            material = f"witness-gate/seed-schedule/v1\0{fixture_digest}\0{generator_version}\0{index}{salt}".encode()
            seeds.append(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))
    return seeds


# A suite declared without fixture data (`fixture = false`, `--no-fixture`) pins nothing:
# its lock names no path, and the digest of no bytes stands where a fixture's would.
NO_FIXTURE: dict[str, Any] = {"path": None, "sha256": hashlib.sha256(b"").hexdigest(), "size": 0}


def pin(
    fixture: Path | None,
    root: Path,
    generator_version: int,
    replays: int = DEFAULT_REPLAYS,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    search_rounds: int = DEFAULT_SEARCH_ROUNDS,
    replay_interpreters: int = DEFAULT_REPLAY_INTERPRETERS,
    replay_cap: int | None = None,
    declared_conditions: tuple[dict[str, str], ...] = (),
    search_salt: str | None = None,
) -> dict[str, Any]:
    """The lock of a fixture; `declared_conditions` (checked by `conditions.check_matrix`)
    and a `search_salt` are recorded only when given, so a lock without them is the same
    bytes as before."""
    if search_salt is not None and not _SALT.match(search_salt):
        raise WitnessGateError(f"--search-salt {search_salt!r}: 1 to 128 letters, digits and . _ -")
    if generator_version < 0:
        raise WitnessGateError(f"--generator-version must be >= 0, got {generator_version}")
    if not 1 <= replays <= 1000:
        raise WitnessGateError(f"--replays must be between 1 and 1000, got {replays}")
    if not 1 <= max_examples <= 100000:
        raise WitnessGateError(f"--max-examples must be between 1 and 100000, got {max_examples}")
    if not 1 <= search_rounds <= 16:
        raise WitnessGateError(f"--search-rounds must be between 1 and 16, got {search_rounds}")
    if not 3 <= replay_interpreters <= 64:
        raise WitnessGateError(f"--replay-interpreters must be between 3 and 64, got {replay_interpreters}")
    if replay_cap is None:  # the default, or one round when a round is larger
        replay_cap = max(DEFAULT_REPLAY_CAP, replays * replay_interpreters)
    if not replays * replay_interpreters <= replay_cap <= 100000:
        raise WitnessGateError(
            f"--replay-cap must be between one round ({replays} x {replay_interpreters} = "
            f"{replays * replay_interpreters}) and 100000, got {replay_cap}"
        )
    pinned: dict[str, Any]
    if fixture is None:
        pinned = dict(NO_FIXTURE)
    else:
        relative = relative_to_root(fixture, root, "fixture")
        digest, size = hash_fixture(fixture)
        if size == 0:
            raise WitnessGateError(
                f"{fixture}: fixture is empty: there are no bytes to pin (a suite without fixture data declares "
                "fixture = false)"
            )
        pinned = {"path": relative, "sha256": digest, "size": size}
    digest = pinned["sha256"]
    record = {
        "schema_version": SCHEMA_VERSION,
        "fixture": pinned,
        "generator_version": generator_version,
        "replays": replays,
        "replay_interpreters": replay_interpreters,
        "replay_cap": replay_cap,
        "replay_spacing_ms": DEFAULT_REPLAY_SPACING_MS,
        "history_limit": DEFAULT_HISTORY_LIMIT,
        "max_examples": max_examples,
        "seed_schedule": seed_schedule(digest, generator_version, search_rounds, search_salt),
        "hypothesis_version": hypothesis_version(),
    }
    if declared_conditions:
        record["conditions"] = [dict(condition) for condition in declared_conditions]
    if search_salt is not None:
        record["search_salt"] = search_salt
    return record


def search_conditions(lock: dict[str, Any]) -> list[dict[str, str]]:
    """The conditions `check` searches under, in order: the declared ones, else the
    workers' fixed environment alone."""
    conditions: list[dict[str, str]] = lock.get("conditions", [{}])
    return conditions


def hash_fixture(fixture: Path) -> tuple[str, int]:
    store.check_regular_file(fixture, "fixture")
    try:
        return file_sha256(fixture)
    except OSError as error:
        raise WitnessGateError(f"{fixture}: cannot read fixture: {error.strerror}") from None


def load(lock_path: Path) -> dict[str, Any]:
    """The lock, to search or replay under (check, classify, verify, freeze): refused when
    this runner's Hypothesis is not the one it was pinned with."""
    lock = store.load_artifact(lock_path, "lock")
    verify_hypothesis_version(lock, lock_path)
    return lock


def fixture_path(lock: dict[str, Any], root: Path) -> Path | None:
    """Where the pinned fixture is; None for a suite declared without fixture data."""
    return None if lock["fixture"]["path"] is None else root / lock["fixture"]["path"]


def absolute_or_none(path: Path | None) -> str | None:
    """A fixture path as a worker's request carries it."""
    return None if path is None else str(path.absolute())


def verify_fixture(lock: dict[str, Any], root: Path, when: str = "") -> None:
    """Refuses (re-pin) unless the fixture's bytes still hash to the lock's digest (a
    suite without fixture data has none to change)."""
    path = fixture_path(lock, root)
    if path is None:
        return
    digest, size = hash_fixture(path)
    if digest != lock["fixture"]["sha256"] or size != lock["fixture"]["size"]:
        prefix = f"fixture changed {when}" if when else "fixture no longer matches the lock"
        raise FixtureChanged(
            f"{path}: {prefix} (sha256 {digest[:12]}..., lock says {lock['fixture']['sha256'][:12]}...): re-pin"
        )


def verify_hypothesis_version(lock: dict[str, Any], lock_path: Path) -> None:
    running = hypothesis_version()
    if running != lock["hypothesis_version"]:
        raise WitnessGateError(
            f"{lock_path}: pinned with Hypothesis {lock['hypothesis_version']}, running {running}: seeded searches "
            "differ across versions; re-pin"
        )
