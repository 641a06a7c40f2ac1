"""The runner PEX: the witness-gate runner from `[witness-gate].runner` (sources in this
repository) or `[witness-gate].install_from_resolve`, composed per target with the
third-party requirements of the code under test."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pants.backend.python.target_types import EntryPoint
from pants.backend.python.util_rules.interpreter_constraints import InterpreterConstraints
from pants.backend.python.util_rules.pex import Pex, PexRequest, VenvPex
from pants.backend.python.util_rules.pex_from_targets import PexFromTargetsRequest, RequirementsPexRequest
from pants.backend.python.util_rules.pex_requirements import PexRequirements, Resolve
from pants.engine.addresses import Address, Addresses, UnparsedAddressInputs
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel

from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.subsystem import WitnessGate


@dataclass(frozen=True)
class RunnerPexRequest:
    """The one runner of the session (its inputs are options, not targets)."""


@dataclass(frozen=True)
class RunnerPex:
    request: PexRequest


@dataclass(frozen=True)
class TargetRunnerRequest:
    addresses: tuple[Address, ...]


RUNNER_MAIN = EntryPoint.parse("witness_gate.cli:main")


def runner_source_problem(runner: str | None, install_from_resolve: str | None) -> str | None:
    """Why the options do not say where the runner comes from, or None."""
    if runner and install_from_resolve:
        return (
            "[witness-gate] sets both `runner` and `install_from_resolve`: the runner comes from one place; unset one"
        )
    if not runner and not install_from_resolve:
        return (
            "[witness-gate] does not say where the runner comes from: add `witness-gate==<version>` to a resolve "
            "(e.g. 3rdparty/python/requirements.txt, then `pants generate-lockfiles`) and set "
            '`install_from_resolve = "<that resolve>"`, or set `runner` to the address of the runner\'s sources'
        )
    return None


@rule(desc="Plan the witness-gate runner", level=LogLevel.DEBUG)
async def plan_runner(_: RunnerPexRequest, gate: WitnessGate) -> RunnerPex:
    """The runner and its requirements, from options only: no target's sources are in it, so
    an edit to the code under test never rebuilds it."""
    problem = runner_source_problem(gate.runner, gate.install_from_resolve)
    if problem:
        raise WitnessGateError(problem)
    if gate.install_from_resolve:
        # Like Pants' own tools: the resolve's interpreter constraints, its pinned versions.
        requirements = PexRequirements(
            gate.requirements,
            from_superset=Resolve(gate.install_from_resolve, use_entire_lockfile=False),
            description_of_origin="the option `[witness-gate].requirements`",
        )
        return RunnerPex(
            PexRequest(
                output_filename="witness_gate_runner.pex",
                internal_only=True,
                requirements=requirements,
                interpreter_constraints=InterpreterConstraints(),
                main=RUNNER_MAIN,
                description="Building the witness-gate runner",
            )
        )
    assert gate.runner is not None  # runner_source_problem: the runner comes from one place
    runner = await Get(
        Addresses,
        UnparsedAddressInputs(
            [gate.runner], owning_address=None, description_of_origin="the option `[witness-gate].runner`"
        ),
    )
    request = await Get(
        PexRequest,
        PexFromTargetsRequest(
            runner,
            output_filename="witness_gate_runner.pex",
            internal_only=True,
            main=RUNNER_MAIN,
            description="Building the witness-gate runner",
        ),
    )
    return RunnerPex(request)


@rule(desc="Build the witness-gate runner with a target's requirements", level=LogLevel.DEBUG)
async def runner_for_target(request: TargetRunnerRequest) -> VenvPex:
    """The runner plus the third-party requirements of one target's closure, the way Pants'
    pytest rule composes its runner: one build per resolve and requirement set, shared by
    every target that has the same."""
    runner, requirements = await MultiGet(
        Get(RunnerPex, RunnerPexRequest()), Get(Pex, RequirementsPexRequest(request.addresses))
    )
    return await Get(VenvPex, PexRequest, dataclasses.replace(runner.request, pex_path=(requirements,)))


def rules():
    return collect_rules()
