"""`pants witness-gate-suites`: the gated suites of the target graph, for `witness-gate review`.

The pull-request gate runs outside Pants, from git objects; this goal is how it learns
what the build graph declares instead of a second declaration in pyproject.toml. Run in
a clean checkout of the base, it prints one JSON document (schemas/suites.schema.json):
each `witness_properties` target with exactly what `pants test` would pass the runner
(fixture, generator version, property modules, replays, max examples, import paths) and
the ownership the test rule derives (implementation and oracle paths), bound to the
commit it was read from, so `review` can refuse a graph read from anything else; and the
third-party projects the suites' closures require (their `python_requirement` targets)
with the lockfile of their resolve, which `review` installs them from.
"""

from __future__ import annotations

import json
import posixpath

from pants.backend.python.subsystems.setup import PythonSetup
from pants.backend.python.target_types import PythonRequirementResolveField, PythonRequirementsField
from pants.backend.python.util_rules.python_sources import PythonSourceFiles, PythonSourceFilesRequest
from pants.engine.console import Console
from pants.engine.goal import Goal, GoalSubsystem, Outputting
from pants.engine.rules import Get, MultiGet, collect_rules, goal_rule
from pants.engine.target import Target, Targets

from witness_gate_pants import git, ownership
from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.git import GitRequest, GitResult
from witness_gate_pants.ownership import GatedClosure, GatedClosureRequest, Ownership, OwnershipRequest
from witness_gate_pants.subsystem import WitnessGate, WitnessPropertiesFieldSet

SCHEMA_VERSION = 1


class SuitesSubsystem(Outputting, GoalSubsystem):
    name = "witness-gate-suites"
    help = "Print the gated suites (`witness_properties` targets) as JSON for `witness-gate review --suites`."


class SuitesGoal(Goal):
    subsystem_cls = SuitesSubsystem
    environment_behavior = Goal.EnvironmentBehavior.LOCAL_ONLY


def suites_document(commit: str, gate: dict, suites: list[dict]) -> str:
    """The canonical document (sorted keys, no spaces): the same graph gives the same bytes."""
    document = {
        "schema_version": SCHEMA_VERSION,
        "commit": commit,
        **gate,
        "suites": sorted(suites, key=lambda s: s["name"]),
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def oracle_globs(field_set: WitnessPropertiesFieldSet) -> list[str]:
    """The target's oracle patterns (its sources, `oracle_paths`, `generated_oracle_paths`),
    relative to the build root."""
    patterns = [
        *(field_set.sources.globs or ()),
        *(field_set.oracle_paths.value or ()),
        *(field_set.generated_oracle_paths.value or ()),
    ]
    return sorted({posixpath.join(field_set.address.spec_path, p) for p in patterns if not p.startswith("!")})


def third_party(closures: list[tuple[Target, ...]], python_setup: PythonSetup) -> dict | None:
    """The projects the closures' `python_requirement` targets name, and their resolve's
    lockfile (None when they require none): review installs exactly these, pinned there."""
    required = sorted(
        {target for closure in closures for target in closure if target.has_field(PythonRequirementsField)},
        key=lambda target: target.address.spec,
    )
    if not required:
        return None
    if not python_setup.enable_resolves:
        raise WitnessGateError(
            f"witness-gate-suites: the suites require third-party projects ({required[0].address.spec}) and "
            "[python].enable_resolves is off: review installs them from a resolve's lockfile; turn resolves on"
        )
    resolves = sorted({target[PythonRequirementResolveField].normalized_value(python_setup) for target in required})
    if len(resolves) != 1:
        raise WitnessGateError(
            f"witness-gate-suites: the suites require projects from {len(resolves)} resolves ({', '.join(resolves)}): "
            "review installs one resolve for every suite"
        )
    projects = {
        requirement.project_name for target in required for requirement in target[PythonRequirementsField].value
    }
    return {"lockfile": python_setup.resolves[resolves[0]], "projects": sorted(projects)}


@goal_rule
async def export_suites(
    console: Console, subsystem: SuitesSubsystem, targets: Targets, gate: WitnessGate, python_setup: PythonSetup
) -> SuitesGoal:
    commit, status = await MultiGet(
        Get(GitResult, GitRequest(("rev-parse", "--verify", "HEAD^{commit}"))),
        Get(GitResult, GitRequest(("status", "--porcelain", "-z", "--untracked-files=no", "--ignore-submodules=none"))),
    )
    if commit.exit_code != 0 or status.exit_code != 0:
        failed = commit if commit.exit_code else status
        raise WitnessGateError(
            f"witness-gate-suites reads the graph of one commit, but git could not name it: {failed.message()}"
        )
    if status.stdout:
        raise WitnessGateError(
            "witness-gate-suites: the checkout has uncommitted changes to tracked files, so the graph it would print "
            "is not the commit's: run it in a clean checkout of the base (e.g. `git worktree add ../trusted <base>`)"
        )
    field_sets = [WitnessPropertiesFieldSet.create(t) for t in targets if WitnessPropertiesFieldSet.is_applicable(t)]
    ownerships = await MultiGet(Get(Ownership, OwnershipRequest(field_set)) for field_set in field_sets)
    closures = await MultiGet(Get(GatedClosure, GatedClosureRequest(field_set)) for field_set in field_sets)
    codes = await MultiGet(
        Get(PythonSourceFiles, PythonSourceFilesRequest(closure.closure, include_files=True)) for closure in closures
    )
    suites = [
        {
            # The folder `pants test` writes its artifacts to (dist/test/<name>/), and review's.
            "name": field_set.address.path_safe_spec,
            "address": field_set.address.spec,
            "fixture": ownership.fixture.path,
            "generator_version": ownership.fixture.generator_version,
            "properties": list(ownership.property_files),
            "replays": field_set.replays.value,
            "max_examples": field_set.max_examples.value,
            "import_paths": sorted(code.source_roots),
            "impl": list(ownership.impl),
            "oracle": list(ownership.oracle),
            # A file the head adds that these globs match is oracle too (excludes ignored: broader is stricter).
            "oracle_globs": oracle_globs(field_set),
            # As declared: the runner parses and checks them, as it does the `--condition` of `pants test`.
            "conditions": list(field_set.conditions.value or ()),
        }
        for field_set, ownership, code in zip(field_sets, ownerships, codes)
    ]
    options = {
        "freezes_dir": gate.freezes_dir,
        "corpus_dir": gate.corpus_dir,
        "per_change_search": gate.per_change_search,
        "max_freeze_hours": gate.max_freeze_hours,
        "replay_timeout_seconds": gate.replay_timeout,
    }
    requirements = third_party([closure.closure for closure in closures], python_setup)
    if requirements is not None:
        options["requirements"] = requirements
    with subsystem.output(console) as write_stdout:
        write_stdout(suites_document(commit.stdout.decode().strip(), options, suites))
    return SuitesGoal(exit_code=0)


def rules():
    return [*collect_rules(), *ownership.rules(), *git.rules()]
