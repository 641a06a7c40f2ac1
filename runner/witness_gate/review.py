"""`review`: the verdict on a patch, computed with the policy of its base revision.

The base supplies everything that decides: the gate's configuration (`[tool.witness-gate]`
of its pyproject.toml, suites included), the property modules, the fixtures, the oracle
paths and the freezes. The head supplies implementation and nothing else: the review
assembles a tree from the base commit with the head's versions of the implementation
paths (deleted ones deleted) and runs the gate there, the suites a change can affect at the
same time, each in a tree of its own. "The head's" means the head as it
would land: merged into the base (a head forked before the base moved is reviewed as the
merge, and one that does not merge cleanly is blocked). Everything else the patch changes
is judged, never executed as policy: a change to the gate's controls, an oracle path or a
freeze is an oracle edit, which gets a review of its own (exit 3, naming each path and its
owner), and together with an implementation change is a mixed edit (blocked). When the
oracle changed, the head's own oracle also runs against the head, so a property that now
rejects unchanged code is labelled `oracle_defect`.

Both revisions are read as git objects (`git.py`); the working tree, the index and the
caller's environment play no part.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from witness_gate import classification
from witness_gate import freeze as freezes
from witness_gate import lock as locks
from witness_gate import replay as replays
from witness_gate import gate as gates
from witness_gate import (
    cache_trust,
    corpus,
    dependencies,
    git,
    integrity,
    oracle_imports,
    pytest_files,
    sandbox,
    selection,
    shared_failures,
    store,
    witness,
)
from witness_gate.labels import EXIT_BLOCKED, EXIT_ORACLE_REVIEW, VERDICTS, most_severe
from witness_gate.config import GateConfig, Suite, parse_config
from witness_gate.errors import SetupFailed, WitnessGateError
from witness_gate.ownership import (
    STARLARK_SUFFIX,
    Ownership,
    declares_gated_targets,
    dependency_files,
    is_build_file,
    oracle_entries,
    own,
    owner,
    with_every_oracle_entry,
)
from witness_gate.paths import compiled_code, gate_list, listable, start_up_code
from witness_gate.properties import property_files
from witness_gate.suites_document import BAZEL_GOAL, GOAL, declared_by, graph_config

# Where each suite's gate writes inside its tree (the lock lives under the root it pins);
# the workers see it read-only, and the review copies it out when the suite is done.
_WORK = ".witness-gate-review"
SCHEMA_VERSION = 3


@dataclass(frozen=True)
class ReviewResult:
    exit_code: int
    lines: list[str]
    record: dict[str, Any]
    suites: dict[str, dict[str, Any]]  # each suite's gate record, by name (its directory under --out)
    reasons: list[str]  # what blocks or needs review beyond the suites' own lines
    freeze_commands: dict[tuple[str, str], str] = field(
        default_factory=dict
    )  # (suite, witness file) of each unfrozen flake
    freeze_steps: dict[tuple[str, str], list[str]] = field(
        default_factory=dict
    )  # the same keys: every step to its freeze's pull request
    reached: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # each suite that ran: the changed implementation files it reached


def with_imported_helpers(tree: Path, config: GateConfig) -> GateConfig:
    """The base's configuration with every repository module its suites' property modules
    import (`oracle_imports`), outside the implementation, among their oracle dependencies:
    declared or not, what chooses the inputs is the oracle's."""
    suites = []
    for suite in config.suites:
        try:
            modules = [
                path.relative_to(tree).as_posix()
                for path in property_files([tree / entry for entry in suite.properties])
            ]
        except (WitnessGateError, ValueError):  # the suite's own run names what is missing
            modules = []
        # What pytest imports on the way to them too: conftest files and test packages' __init__.py.
        modules += [
            path
            for entry in suite.properties
            for path in pytest_files.read_at_collection(entry)
            if path.endswith(".py") and (tree / path).is_file()
        ]
        impl = set(suite.impl)
        found = oracle_imports.helpers(
            tree,
            modules,
            suite.import_paths or config.import_paths,
            lambda path: path in impl or owner(path, config.impl_prefixes, ()) == "impl",
        )
        extra = tuple(path for path in sorted(found) if path not in suite.oracle_dependencies)
        suites.append(replace(suite, oracle_dependencies=(*suite.oracle_dependencies, *extra)) if extra else suite)
    return replace(config, suites=tuple(suites))


def _symlinked_oracle(tree: Path, config: GateConfig) -> dict[str, str]:
    """Where oracle paths of the base tree really live when a symlink leads there: each
    real location with the oracle path that reaches it."""
    return selection.real_locations(tree, [entry for entry, _ in oracle_entries(config)])


def _gated_build_files(repo: Path, revisions: tuple[str, ...], paths: list[str]) -> frozenset[str]:
    """The changed build (and .bzl) files that name a gated target type in any of the revisions."""
    return frozenset(
        path
        for path in paths
        if any(declares_gated_targets(path, git.read_file(repo, revision, path) or b"") for revision in revisions)
    )


def suite_config(suite: Suite, config: GateConfig) -> GateConfig:
    """The configuration a suite's gate runs with (pure): a target of the build graph gets its
    own implementation and source roots, as under `pants test`, after the code's dependencies."""
    if not suite.impl:
        return config
    provided = tuple(path for path in config.import_paths if path == dependencies.INSIDE)
    return replace(
        config,
        impl_prefixes=tuple(p for p in suite.impl if p in config.impl_prefixes) or config.impl_prefixes,
        import_paths=(*provided, *(suite.import_paths or (".",))),
    )


def _each_passes_on(suite: Suite, tree: Path, config: GateConfig, gate_out: Path, rows: list[dict[str, Any]]) -> bool:
    """Whether each of a gate's regression rows passes one replay in `tree` (the base's) under
    the gate's own lock: then the base shares none of them, and a base gate run, a search and
    every replay again, would only say so at length. Asked only of rows the shrunk payload
    alone decided: one that rests on its history, the in-process call or the unshrunk payload
    can pass alone on the base and still fail there the same way."""
    lock = locks.load(gate_out / gates.LOCK_NAME)
    report = classification.load_report(gate_out / gates.REPORT_NAME, lock)
    decided_by = {f"{gates.WITNESS_DIR}/{row['file']}": row["replayed"] for row in report["witnesses"]}
    if any(decided_by.get(row["file"]) != "shrunk" for row in rows):
        return False
    records = {
        f"{gates.WITNESS_DIR}/{path.name}": record
        for path, record in witness.load_directory(gate_out / gates.WITNESS_DIR, lock)
    }
    config = suite_config(suite, config)
    plan = replays.ReplayPlan(
        tree, config.import_paths, locks.fixture_path(lock, tree), lock, config.replay_timeout_seconds
    )
    return replays.passing([(row["file"], records[row["file"]]) for row in rows], plan) == {row["file"] for row in rows}


def _run_suite(
    suite: Suite, tree: Path, config: GateConfig, changed: Path, out: Path, now: datetime, salt: str | None = None
) -> dict[str, Any]:
    config = suite_config(suite, config)
    files = property_files([tree / entry for entry in suite.properties])
    request = gates.GateRequest(
        tree,
        None if suite.fixture is None else tree / suite.fixture,
        suite.generator_version,
        suite.replays,
        suite.max_examples,
        files,
        out,
        False,
        changed,
        tree / config.freezes_dir,
        with_every_oracle_entry(config),
        conditions=suite.conditions,
        corpus_dir=tree / config.corpus_dir,
        search_salt=salt,
    )
    return gates.run(request, now).record


def unreviewable(path: str, change: git.Change) -> str | None:
    """Why the head may not carry this implementation path at all, whether or not a suite
    runs (pure): what the gate's workers never execute as the diff shows it cannot be
    judged by them."""
    if "160000" in (change.base_mode, change.head_mode):
        return f"{path}: a submodule change cannot be reviewed here; blocked"
    if change.head_mode is None:
        return None
    if compiled_code(path):
        return (
            f"{path}: compiled code in the patch (bytecode or an extension module) is not reviewed: "
            "the review tests only what the diff shows as source; blocked"
        )
    if start_up_code(path):
        return (
            f"{path}: code an interpreter runs at start-up, which the gate's workers skip (-S), is not reviewed: "
            "it would change what the landed code does unseen; blocked"
        )
    return None


def _apply_head(
    repo: Path,
    landed: str,
    tree: Path,
    ownership: Ownership,
    changes: dict[str, git.Change],
    reaching: Callable[[str], bool] | None,
) -> list[str]:
    """Puts the landed implementation into the base's tree (but for the unreviewable paths,
    which block on their own, and, in a graph suite's tree, the paths that do not reach it);
    returns what could not be applied."""
    problems = []
    for path in ownership.impl:
        change = changes[path]
        if unreviewable(path, change) is not None or (reaching is not None and not reaching(path)):
            continue
        try:
            target = tree / path
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.is_symlink() or target.exists():
                target.unlink()
            if change.head_mode is not None:
                git.write_blob(repo, landed, path, tree)
        except WitnessGateError as error:  # it names the path already
            problems.append(str(error))
        except OSError as error:
            problems.append(f"{path[:200]!r}: {error.strerror}")
    return problems


def _attempt(run: Callable[[], dict[str, Any]]) -> dict[str, Any] | str:
    """A suite's gate record, or why it could not run. The base's configuration was checked
    before anything ran, so what goes wrong now is the doing of the code under test or of
    the tree it landed: a reason for a verdict, never a refusal or a traceback it chose."""
    try:
        return run()
    except SetupFailed:
        raise
    except WitnessGateError as error:
        return str(error)
    except (OSError, RuntimeError, ValueError) as error:  # e.g. a symlink loop in the landed tree
        return f"{type(error).__name__}: {str(error)[:500]}"


def _blocked_unless_run(outcome: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(outcome, dict):
        return outcome
    return {
        "exit_code": EXIT_BLOCKED,
        "verdict": "blocked",
        "witnesses": [],
        "freezes": [],
        "reasons": [f"blocked: {outcome}"],
        "mode": "gate",
    }


def review(
    repo: Path,
    base_ref: str,
    head_ref: str,
    out_dir: Path,
    now: datetime,
    environ: Mapping[str, str],
    suites_document: Path | None = None,
) -> ReviewResult:
    integrity.verify_own_code()
    sandbox.require_confinement("review")
    base, head = git.commit(repo, base_ref, "base"), git.commit(repo, head_ref, "head")
    # The job's environment and the base's Pants configuration: the head's is an oracle edit.
    writes = cache_trust.cache_write_settings(
        environ, {f"{base_ref}:{name}": git.read_file(repo, base, name) for name in cache_trust.CONFIG_FILES}
    )
    if writes:
        raise WitnessGateError(
            f"{'; '.join(writes)}: a pull-request job must not write the shared remote cache; {cache_trust.FIX} "
            "(docs/scale-out.md)"
        )
    config = _base_config(repo, base_ref, base, suites_document)
    with store.staged_directory(out_dir, "review.json", "--out") as stage:
        result = _review(repo, base, head, config, stage, now)
    runner = (
        freezes.JOB_RUNNER
        if git.read_file(repo, base, freezes.JOB_PATH) is not None
        else freezes.PANTS_RUNNER
        if git.read_file(repo, base, "pants") is not None
        else freezes.PLAIN_RUNNER
    )
    where = freezes.ReviewFreeze(
        str(out_dir),
        base,
        head,
        runner,
        None
        if suites_document is None
        else f"./{GOAL}"
        if git.read_file(repo, base, "pants") is not None
        else BAZEL_GOAL,
    )
    hours = min(freezes.SUGGESTED_HOURS, config.max_freeze_hours)
    commands = {
        (name, row["file"]): freezes.review_command(where, name, row, config.freezes_dir, hours)
        for name, record in result.suites.items()
        for row in gates.unfrozen_flakes(record)
    }
    steps = {key: freezes.review_steps(where, command, config.freezes_dir, key[1]) for key, command in commands.items()}
    told = [
        f"{name}: to freeze it, open a pull request of its own against the base (its owners review it), from a "
        "checkout of the "
        f"base with this review's --out at {out_dir} and the head fetched, with the file this writes: {command}"
        for (name, _), command in commands.items()
    ]
    declared = (
        f"the base's build graph ({suites_document})" if suites_document is not None else "the base's pyproject.toml"
    )
    suites = f"suites: {', '.join(suite.name for suite in config.suites)} (declared in {declared})"
    return replace(
        result,
        lines=[suites, *result.lines[:-1], *told, result.lines[-1]],
        freeze_commands=commands,
        freeze_steps=steps,
    )


def _base_config(repo: Path, base_ref: str, base: str, suites_document: Path | None) -> GateConfig:
    """What the base declares: its build graph's suites (from the document its Pants or its
    Bazel printed) where its build files declare gated targets, else its pyproject suites."""
    policy = git.read_file(repo, base, "pyproject.toml")
    pyproject = parse_config(policy, f"{base_ref}:pyproject.toml") if policy is not None else GateConfig()
    if suites_document is not None:
        data = store.read_regular_file(suites_document, "--suites document")
        return graph_config(data, str(suites_document), base, pyproject)
    declaring = {
        path: goal
        for path, text in sorted(git.files_where(repo, base, _is_build_declaration).items())
        if (goal := declared_by(path, text)) is not None
    }
    if declaring:
        shown = ", ".join(list(declaring)[:3]) + (f" and {len(declaring) - 3} more" if len(declaring) > 3 else "")
        goals = " or ".join(f"`{goal}`" for goal in sorted(set(declaring.values())))
        raise WitnessGateError(
            f"{base_ref}: {shown} declare gated targets (witness_properties, witness_gate_test), which only the build "
            "graph describes: "
            f"run {goals} in a clean checkout of the base and pass that file with --suites"
        )
    if policy is None:
        raise WitnessGateError(
            f"{base_ref}: the base has no pyproject.toml and no gated target: nothing declares what to gate"
        )
    if not pyproject.suites:
        raise WitnessGateError(
            f"{base_ref}:pyproject.toml: [[tool.witness-gate.suites]] declares no suite: nothing to gate"
        )
    return pyproject


def _is_build_declaration(path: str) -> bool:
    return is_build_file(path) and not path.endswith(STARLARK_SUFFIX)


def _review(repo: Path, base: str, head: str, config: GateConfig, out_dir: Path, now: datetime) -> ReviewResult:
    fork_point = git.merge_base(repo, base, head)
    if fork_point is None:
        problem = (
            "the head has no merge base with the base: its history is unrelated (or this clone is shallow: "
            "fetch the full history, e.g. fetch-depth: 0), so what it changes cannot be known"
        )
        return _verdict(_VerdictInputs(base, head, problems=[problem]), out_dir)
    landed = git.merge(repo, base, head)
    if landed.tree is None:
        conflicts = ", ".join(landed.conflicts[:5]) or "(no path named)"
        problem = (
            f"the head does not merge cleanly into the base ({conflicts}): rebase it onto the base, then review again"
        )
        return _verdict(_VerdictInputs(base, head, fork_point, problems=[problem]), out_dir)
    landed_tree = landed.tree  # a str from here on, for the suites' closure below too
    changes = git.changes(repo, base, landed.tree)
    paths = [change.path for change in changes]
    by_path = {change.path: change for change in changes}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="witness-gate-review-") as scratch:
        work = Path(scratch)
        base_tree = work / "base"
        git.export(repo, base, base_tree)
        gated_build_files = _gated_build_files(repo, (base, landed.tree), paths)
        config = with_imported_helpers(base_tree, config)
        try:
            ownership = own(paths, config, _symlinked_oracle(base_tree, config), gated_build_files)
        except (OSError, RuntimeError) as error:  # a symlink loop among the base's oracle paths
            problem = f"{type(error).__name__}: {error}"
            return _verdict(_VerdictInputs(base, head, fork_point, landed.tree, paths, problems=[problem]), out_dir)
        # What decides lives outside every tree a worker sees: the changed-file list, the
        # ownership (in memory) and each suite's artifacts. A name the list cannot carry (a
        # line break, a backslash, not UTF-8) still counts above.
        problems += [
            f"{p[:200]!r}: a changed path the gate's list cannot carry; judged by its owner only"
            for p in paths
            if not listable(p)
        ]
        changed_list = work / "changed.txt"
        changed_list.write_bytes(gate_list(paths))
        if (
            (base_tree / _WORK).exists()
            or (base_tree / _WORK).is_symlink()
            or any(p.split("/", 1)[0] == _WORK for p in paths)
        ):
            problems.append(f"{_WORK}/ is committed: it is the review's own work directory; remove it")
        # What the head may not carry blocks whether or not a suite runs.
        problems += [refusal for path in ownership.impl if (refusal := unreviewable(path, by_path[path])) is not None]
        problems += _orphaned_corpus(repo, landed.tree, config, work / "corpus")
        linked = selection.symlinked_closure(base_tree, config)
        selected = {
            suite.name: selection.selection(suite, ownership, linked)
            for suite in config.suites
            if suite.impl  # a build graph's
        }
        selected.update(selection.select_pyproject(repo, landed_tree, base_tree, work / "landed", config, ownership))
        selected = {suite.name: selected[suite.name] for suite in config.suites}  # the declared order
        affected = [(index, suite) for index, suite in enumerate(config.suites) if selected[suite.name][0]]
        runs_head_oracle = bool(ownership.oracle) and not ownership.impl
        config, provided = (
            _with_dependencies(repo, base, config, work / "dependencies")
            if affected or runs_head_oracle
            else (config, {})
        )

        # Drawn now, at random: a salt the author could compute (the merged tree id) would let
        # commits be ground offline until one search misses the bug. Recorded in each lock.
        per_change_salt = secrets.token_hex(16)

        def run_affected(index: int, suite: Suite) -> tuple[dict[str, Any], list[str], list[dict[str, Any]]]:
            # A tree of its own per suite, written from git objects: suites running at the
            # same time never share one.
            tree = work / f"suite-{index}"
            git.export(repo, base, tree, selection.closure_only(suite, config, linked))
            applied = _apply_head(repo, landed_tree, tree, ownership, by_path, selection.reaching(suite, linked))
            _remove(tree / _WORK)
            salt = per_change_salt if config.per_change_search else None
            record = _blocked_unless_run(
                _attempt(lambda: _run_suite(suite, tree, config, changed_list, tree / _WORK / suite.name, now, salt))
            )
            _copy_out(tree / _WORK / suite.name, out_dir / suite.name)
            shareable = shared_failures.shareable(record)
            if not shareable:  # a flake's way out is a freeze: the base is not asked
                return record, applied, []
            # The same witnesses on the base's implementation: what it fails the same way is not the patch's.
            on_base = work / f"base-suite-{index}"
            git.export(repo, base, on_base, selection.closure_only(suite, config, linked))
            _remove(on_base / _WORK)
            if _each_passes_on(suite, on_base, config, out_dir / suite.name, shareable):
                return (
                    record,
                    applied,
                    [],
                )  # each passed there once, so none fails there on every replay: all the patch's
            shutil.copytree(out_dir / suite.name / gates.WITNESS_DIR, on_base / _WORK / suite.name / gates.WITNESS_DIR)
            base_record = _attempt(
                lambda: _run_suite(suite, on_base, config, changed_list, on_base / _WORK / suite.name, now, salt)
            )
            return record, applied, shared_failures.shared(record, base_record) if isinstance(base_record, dict) else []

        with sandbox.providing(provided):
            outcomes = _concurrently(run_affected, affected)
        suites = {suite.name: record for (_, suite), (record, _, _) in zip(affected, outcomes)}
        pre_existing = {suite.name: rows for (_, suite), (_, _, rows) in zip(affected, outcomes) if rows}
        problems += sorted({problem for _, applied, _ in outcomes for problem in applied})  # each said once
        head_oracle = {}
        if runs_head_oracle:
            head_tree = work / "head"
            git.export(repo, landed.tree, head_tree)
            _remove(head_tree / _WORK)

            def run_head_oracle(suite: Suite) -> dict[str, Any]:
                outcome = _attempt(
                    lambda: _run_suite(suite, head_tree, config, changed_list, head_tree / _WORK / suite.name, now)
                )
                _copy_out(head_tree / _WORK / suite.name, out_dir / "head-oracle" / suite.name)
                return outcome if isinstance(outcome, dict) else {"error": outcome}

            with sandbox.providing(provided):
                head_oracle = dict(
                    zip(
                        (suite.name for suite in config.suites),
                        _concurrently(run_head_oracle, [(suite,) for suite in config.suites]),
                    )
                )
    inputs = _VerdictInputs(
        base,
        head,
        fork_point,
        landed.tree,
        paths,
        ownership,
        suites=suites,
        head_oracle=head_oracle,
        problems=problems,
        selected=selected,
        pre_existing=pre_existing,
    )
    result = _verdict(inputs, out_dir)
    return replace(
        result,
        reached={
            suite.name: reached_implementation(ownership, by_path, selection.reaching(suite, linked))
            for _, suite in affected
        },
    )


def reached_implementation(
    ownership: Ownership, changes: dict[str, git.Change], reaching: Callable[[str], bool] | None
) -> tuple[str, ...]:
    """The changed implementation files a suite's tree took from the head and that still
    exist there: where its failing tests point besides the property (pure)."""
    return tuple(
        path
        for path in ownership.impl
        if changes[path].head_mode not in (None, "160000")
        and not compiled_code(path)
        and (reaching is None or reaching(path))
    )


def _with_dependencies(repo: Path, base: str, config: GateConfig, target: Path) -> tuple[GateConfig, dict[str, Path]]:
    """The base's configuration with its code's third-party packages (a requirements file, or
    the projects a build graph's suites require from its lockfile) first on the import path,
    and the directory each worker is shown them from; unchanged where the base declares
    none. The base's files, installed by this side: the head cannot choose them."""
    files = dependency_files(config)
    if not files:
        return config, {}
    [where] = files  # a build graph's document is the whole configuration: never both
    pinned = git.read_file(repo, base, where)
    if pinned is None:
        raise WitnessGateError(f"the base pins its code's dependencies in {where!r}, which it does not have")
    if config.resolve is not None:
        pinned = dependencies.pinned_from_lock(pinned, config.resolve.projects, where)
    dependencies.install(pinned, where, target / "site")
    return replace(config, import_paths=(dependencies.INSIDE, *config.import_paths)), {
        dependencies.INSIDE: target / "site"
    }


# Memory one running suite may need: its gate's replay interpreters and their children.
_SUITE_MEMORY = 512 << 20


def concurrent_suites(cores: int, available_memory: int | None) -> int:
    """How many suites run at once (pure): one per core this process may use, fewer when
    the memory available would not hold them, never fewer than one."""
    by_memory = cores if available_memory is None else available_memory // _SUITE_MEMORY
    return max(1, min(cores, by_memory))


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            fields = dict(line.split(":", 1) for line in handle)
        return int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None


def _concurrently(run: Callable[..., Any], calls: list[tuple[Any, ...]]) -> list[Any]:
    """`run(*call)` for every call, up to `concurrent_suites` at a time in threads of this
    process (each starts its own confined workers; none runs user code), results in the
    order of `calls` whatever order they finish in."""
    if len(calls) <= 1:
        return [run(*call) for call in calls]
    limit = concurrent_suites(len(os.sched_getaffinity(0)), _available_memory())
    with ThreadPoolExecutor(max_workers=limit) as pool:
        return list(pool.map(lambda call: run(*call), calls))


def _orphaned_corpus(repo: Path, tree: str, config: GateConfig, scratch: Path) -> list[str]:
    """Why each corpus entry of the landed tree that no gate would replay blocks (its module
    renamed, moved or no longer gated), and each that is no valid witness."""
    prefix = config.corpus_dir.rstrip("/") + "/"
    found = git.files_where(
        repo, tree, lambda path: path.startswith(prefix) and "/" not in path[len(prefix) :] and path.endswith(".json")
    )
    scratch.mkdir(parents=True, exist_ok=True)
    entries, problems = {}, []
    for path, data in found.items():
        name = path[len(prefix) :]
        (scratch / name).write_bytes(data)
        try:
            entries[name] = witness.read(scratch / name)
        except WitnessGateError as error:
            problems.append(str(error).replace(str(scratch / name), path))
    gated = [entry.rstrip("/") for suite in config.suites for entry in suite.properties]
    return problems + corpus.orphaned(
        entries,
        lambda module: any(module == entry or module.startswith(entry + "/") for entry in gated),
        lambda module: git.read_file(repo, tree, module) is not None,
    )


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _copy_out(gate_dir: Path, destination: Path) -> None:
    if gate_dir.is_dir() and not gate_dir.is_symlink():
        shutil.copytree(gate_dir, destination, symlinks=True)


@dataclass(frozen=True)
class _VerdictInputs:
    """Everything a review's verdict is decided from, gathered before it is decided: the two
    commits and how they merge, what the patch changes and who owns it, and what each suite's
    run found. A review that stops early (no merge base, a conflict) knows only the first of
    them: the rest stay empty."""

    base: str
    head: str
    fork_point: str | None = None
    merged_tree: str | None = None
    paths: list[str] = field(default_factory=list)
    ownership: Ownership = field(default_factory=lambda: Ownership((), {}))
    suites: dict[str, Any] = field(default_factory=dict)  # each affected suite's gate record
    head_oracle: dict[str, Any] = field(default_factory=dict)  # the head's own oracle on the unchanged implementation
    problems: list[str] = field(default_factory=list)  # what blocks, each the patch's doing
    # Each suite's `selection` (whether it ran, and why), and each suite's blocking rows the
    # base fails the same way (`shared_failures`).
    selected: dict[str, tuple[bool, str]] = field(default_factory=dict)
    pre_existing: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _verdict(inputs: _VerdictInputs, out_dir: Path) -> ReviewResult:
    """The review's verdict and its lines, its record written to `out_dir`."""
    base, head, paths, ownership = inputs.base, inputs.head, inputs.paths, inputs.ownership
    problems, selected, pre_existing = inputs.problems, inputs.selected, inputs.pre_existing
    unaffected = {name: why for name, (runs, why) in selected.items() if not runs}
    codes = [EXIT_BLOCKED] * len(problems)
    reasons = [
        f"blocked: {problem}" for problem in problems
    ]  # each is the patch's doing: a verdict, never a refusal it could choose
    suite_lines = []
    verdicts = {}
    suites: dict[str, dict[str, Any]] = {}  # each record with the failures the base shares set aside
    for name, record in inputs.suites.items():
        shared = pre_existing.get(name, [])
        code = shared_failures.exit_code_without(record, shared)
        codes.append(code)
        verdicts[name] = VERDICTS[code]
        suites[name] = record = shared_failures.set_aside(record, shared)
        suite_lines += [f"{name}: {selected[name][1]}"] if name in selected else []
        suite_lines += [f"{name}: {line}" for line in gates.summary_lines(record)[:-1]]
        suite_lines += [f"{name}: {line}" for line in shared_failures.lines(shared)]
        suite_lines.append(
            f"{name}: gate {record['verdict']} under the base's oracle and freezes, with the head's implementation"
            + (f"; {verdicts[name]} with the failures the base shares set aside" if code != record["exit_code"] else "")
        )
    suite_lines += [f"{name}: {reason}" for name, reason in unaffected.items()]
    for name, record in inputs.head_oracle.items():
        if "error" in record:
            reasons.append(f"{name}: the head's own oracle could not run: {record['error']}")
        else:
            reasons += [
                f"{name}: the head's oracle rejects the unchanged implementation: {row['assertion_id']} "
                f"({row['label']})"
                for row in record["witnesses"]
            ]
    if ownership.oracle:
        reasons += [f"oracle edit: {path} (owner: {who})" for path, who in sorted(ownership.oracle.items())]
        if ownership.impl:
            codes.append(EXIT_BLOCKED)
            reasons.append(
                "mixed_edit: the patch changes implementation and oracle paths - Block. Split the diff: oracle first, "
                "in its own review."
            )
        else:
            codes.append(EXIT_ORACLE_REVIEW)
            reasons.append(
                "oracle_review: the patch changes oracle paths - Open a separate oracle review; the owners of each "
                "path above must approve it."
            )
    lines = [*reasons[: len(problems)], *suite_lines, *reasons[len(problems) :]]
    exit_code = most_severe(codes)
    record = {
        "schema_version": SCHEMA_VERSION,
        "base": base,
        "head": head,
        "merge_base": inputs.fork_point,
        "merged_tree": inputs.merged_tree,
        "changed_paths": len(paths),
        "implementation_paths": list(ownership.impl),
        "oracle_paths": dict(sorted(ownership.oracle.items())),
        "suites": {**verdicts, **{name: "unaffected" for name in unaffected}},
        "verdict": VERDICTS[exit_code],
        "exit_code": exit_code,
    }
    if pre_existing and any(pre_existing.values()):
        record["pre_existing"] = {
            name: [{key: row[key] for key in ("file", "assertion_id", "witness_hash", "label")} for row in rows]
            for name, rows in sorted(pre_existing.items())
            if rows
        }
    lines.append(
        f"review: {record['verdict']} (exit {exit_code}; base {base[:12]}, head {head[:12]}, {len(paths)} changed "
        "paths)"
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    store.save_artifact(out_dir / "review.json", "review", record)
    return ReviewResult(exit_code, lines, record, suites, reasons)
