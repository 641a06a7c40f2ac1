"""The retained witness corpus: a failure found once is checked by every later run.

The search is seeded from the lock's schedule, so a bug that the default budget misses is
missed on every run, and a witness found by a red run, a developer's run or a long search
would be thrown away with its run's artifacts. A team keeps such witnesses in the corpus
directory (`corpus-dir`, `[witness-gate].corpus_dir`; default `.witness-gate/corpus/`): each
entry is a witness file exactly as `check` wrote it (`witness-gate retain` copies it there).
The corpus is oracle: `review` judges every change to it as an oracle edit, so an entry can
be added or removed only in a review of its own, and nothing in it can weaken a check: an
entry only adds a payload to replay.

Every `gate` (and so `pants test`, `bazel test` and `review`) replays the entries of its
property modules with its own witnesses; `review` also blocks an entry whose module no suite
gates any more (`orphaned`), which no gate would ever replay. An entry that fails again is
labelled like any witness, with "this input failed before" in its reason; one that passes
holds and is listed as such. An entry
recorded under another fixture digest, another Hypothesis version or another version of its
property module cannot be replayed as it was found, and blocks the run, naming it, until it
is retained again or removed: never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import store, witness
from witness_gate.errors import WitnessGateError


@dataclass(frozen=True)
class Corpus:
    entries: list[tuple[Path, witness.Witness]]  # replayable under this run's lock
    stale: list[str]  # why each other entry of these property modules cannot be replayed

    @property
    def names(self) -> frozenset[str]:
        return frozenset(path.name for path, _ in self.entries)


def load(directory: Path, lock: dict[str, Any], modules: dict[str, str]) -> Corpus:
    """The entries for the property modules of this run (`modules`: repository path ->
    sha256 of its source now); entries of other modules belong to other suites."""
    if directory.is_symlink() or (
        directory.exists() and not directory.is_dir()
    ):  # a dangling link too: never "no corpus"
        raise WitnessGateError(f"{directory}: corpus directory is not a plain directory")
    if not directory.exists():
        return Corpus([], [])
    entries, stale = [], []
    for path in sorted(directory.glob("*.json")):
        record = witness.read(path)  # a malformed entry is refused, like a malformed freeze
        module = record.property_module.path
        if module not in modules:
            continue
        problem = staleness(record, lock, modules[module])
        if problem is None:
            entries.append((path, record))
        else:
            stale.append(
                f"corpus entry {path.name}: {problem}: it cannot be replayed as it was found; "
                "retain a witness of the same input under this pin, or remove the entry (an oracle edit)"
            )
    return Corpus(entries, stale)


def staleness(record: witness.Witness, lock: dict[str, Any], module_sha256: str) -> str | None:
    """Why an entry cannot be replayed under this lock and module, or None (pure)."""
    if record.fixture_digest != lock["fixture"]["sha256"]:
        return f"recorded under fixture {record.fixture_digest[:12]}, this run pins {lock['fixture']['sha256'][:12]}"
    if record.hypothesis_version != lock["hypothesis_version"]:
        return f"recorded under Hypothesis {record.hypothesis_version}, this run pins {lock['hypothesis_version']}"
    if record.property_module.sha256 != module_sha256:
        return f"its property module {record.property_module.path} changed since it was retained"
    return None


def orphaned(
    entries: dict[str, witness.Witness], gated: Callable[[str], bool], present: Callable[[str], bool]
) -> list[str]:
    """The entries (file name -> record) whose property module the tree lacks or no suite
    gates (pure): a gate replays the entries of its own modules only, so these would never
    be replayed again (a renamed or moved property module leaves its entries behind)."""
    problems = []
    for name, record in sorted(entries.items()):
        module = record.property_module.path
        where = "is not in the tree" if not present(module) else "is gated by no suite"
        if not (present(module) and gated(module)):
            problems.append(
                f"corpus entry {name}: its property module {module} {where}: it would never be replayed; "
                "retain its input again under the module's new path, or remove the entry (an oracle edit)"
            )
    return problems


def retain(witness_path: Path, directory: Path) -> tuple[Path, bool]:
    """Copies a witness into the corpus, bytes unchanged; (its path, whether it was new)."""
    witness.read(witness_path)
    data = store.read_regular_file(witness_path, "witness")
    target = directory / witness_path.name
    if target.exists() or target.is_symlink():
        if store.read_regular_file(target, "corpus entry") == data:
            return target, False
        raise WitnessGateError(
            f"{target}: a different corpus entry already has this name: remove it first (an oracle edit)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    store.write_atomic(target, data)
    return target, True
