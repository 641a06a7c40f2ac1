"""`pants test` for `witness_properties`: one sandboxed runner process per target.

The plugin only gathers inputs (the pinned fixture, the property modules, the ownership
derived from the target graph, the changed-file list and the freezes) and runs the
runner PEX's `gate` command on them; every verdict is the runner's. Anything that can
change a verdict reaches the process through its argv or its input digest, so Pants'
cache can never serve a stale one; freezes, whose expiry depends on the clock, make the
process uncacheable instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable

from pants.backend.python.util_rules.pex import VenvPex, VenvPexProcess
from pants.backend.python.util_rules.python_sources import PythonSourceFiles, PythonSourceFilesRequest
from pants.core.goals.test import TestExtraEnv, TestRequest, TestResult, TestSubsystem
from pants.core.util_rules.distdir import DistDir
from pants.core.util_rules.partitions import Partition, PartitionerType, Partitions
from pants.engine.fs import (
    CreateDigest,
    Digest,
    DigestContents,
    DigestSubset,
    Directory,
    FileContent,
    FileDigest,
    MergeDigests,
    PathGlobs,
    RemovePrefix,
    Snapshot,
)
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel

from witness_gate_pants import changed_paths, ownership, runner_pex
from witness_gate_pants.changed_paths import ChangedPaths, ChangedPathsRequest
from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.ownership import GatedClosure, GatedClosureRequest, Ownership, OwnershipRequest
from witness_gate_pants.runner_pex import TargetRunnerRequest
from witness_gate_pants.subsystem import WitnessGate, WitnessPropertiesFieldSet

OUT_DIR = "__witness_gate_out"
GATE_JSON = "gate.json"
_VERDICTS = {"pass": 0, "blocked": 1, "oracle_review": 3, "incomplete": 4}
XML_DIR = "__witness_gate_xml"
_INPUTS_DIR = "__witness_gate_in"


class WitnessGateTestRequest(TestRequest):
    # Pants types this as a subsystem with Pants' `SkipOption`; the gate's `skip` is a plain
    # BoolOption that only exists to be refused (see the partitioner below).
    tool_subsystem = WitnessGate  # type: ignore[assignment]
    field_set_type = WitnessPropertiesFieldSet
    # Pants' own partitioners return nothing when `[witness-gate].skip` is set, which would
    # turn every gated target green by omission; ours refuses instead.
    partitioner_type = PartitionerType.CUSTOM


@dataclass(frozen=True)
class _OnePerTarget:
    @property
    def description(self) -> None:
        return None


def relevant_changes(changed: Iterable[str], ownership: Ownership, freezes_dir: str) -> tuple[str, ...]:
    """The changed paths this target's verdict depends on.

    Passing only these keeps the process cacheable across edits elsewhere in the
    repository; paths no side owns could not change the split anyway."""
    owned = set(ownership.impl) | set(ownership.oracle)
    prefix = freezes_dir.rstrip("/") + "/"
    return tuple(sorted(path for path in changed if path in owned or path.startswith(prefix)))


def target_exit_code(process_exit: int, gate_json: bytes | None) -> tuple[int, str | None]:
    """The target passes only when the runner exited 0 and its gate.json says pass.

    Neither alone is trusted: a missing, unreadable or contradicting verdict fails the
    target (with the reason), whatever the process's exit status."""
    failing = process_exit if process_exit != 0 else 1
    if gate_json is None:
        return failing, None if process_exit != 0 else "the runner wrote no gate.json: the target fails closed"
    try:
        record = json.loads(gate_json)
    except ValueError:
        return failing, "gate.json is not JSON: the target fails closed"
    if (
        not isinstance(record, dict)
        or record.get("verdict") not in _VERDICTS
        or record.get("exit_code") != _VERDICTS[record["verdict"]]
    ):
        return failing, "gate.json has no consistent verdict: the target fails closed"
    if record["verdict"] == "pass" and process_exit == 0:
        return 0, None
    if record["verdict"] == "pass":
        return failing, f"the runner exited {process_exit} although gate.json says pass: the target fails closed"
    return (
        failing,
        None
        if process_exit != 0
        else f"gate.json says {record['verdict']} although the runner exited 0: the target fails closed",
    )


def _lines(paths: Iterable[str]) -> bytes:
    return "".join(f"{path}\n" for path in paths).encode()


@rule(desc="Partition witness_properties targets", level=LogLevel.DEBUG)
async def partition_witness_targets(
    request: WitnessGateTestRequest.PartitionRequest[WitnessPropertiesFieldSet], gate: WitnessGate
) -> Partitions[WitnessPropertiesFieldSet, _OnePerTarget]:
    if gate.skip and request.field_sets:
        raise WitnessGateError(
            "[witness-gate].skip is set, but the gate has no off switch: skipping would report "
            f"{len(request.field_sets)} witness_properties target(s) as green without running them. "
            "Unset it; `enabled = false` still runs the properties and fails on any failure."
        )
    return Partitions(Partition((field_set,), _OnePerTarget()) for field_set in request.field_sets)


@dataclass(frozen=True)
class OutputSubset:
    digest: Digest
    directory: str


@rule(level=LogLevel.DEBUG)
async def output_subset(request: OutputSubset) -> Snapshot:
    """One output directory of the process, with its prefix removed."""
    subset = await Get(Digest, DigestSubset(request.digest, PathGlobs([f"{request.directory}/**"])))
    return await Get(Snapshot, RemovePrefix(subset, request.directory))


@rule(desc="Run the witness gate", level=LogLevel.DEBUG)
async def run_witness_gate(
    batch: WitnessGateTestRequest.Batch[WitnessPropertiesFieldSet, Any],
    gate: WitnessGate,
    test_subsystem: TestSubsystem,
    test_extra_env: TestExtraEnv,
    distdir: DistDir,
) -> TestResult:
    field_set = batch.single_element
    ownership, gated, freezes, corpus = await MultiGet(
        Get(Ownership, OwnershipRequest(field_set)),
        Get(GatedClosure, GatedClosureRequest(field_set)),
        Get(Snapshot, PathGlobs([os.path.join(gate.freezes_dir, "*.json")])),
        Get(Snapshot, PathGlobs([os.path.join(gate.corpus_dir, "*.json")])),
    )
    # The code under test reaches the sandbox as files under its source roots, like Pants'
    # pytest rule does it, so editing it changes the input digest and never the runner.
    runner, code = await MultiGet(
        Get(VenvPex, TargetRunnerRequest(gated.addresses)),
        Get(PythonSourceFiles, PythonSourceFilesRequest(gated.closure, include_files=True)),
    )
    argv = [
        "gate",
        "--fixture",
        ownership.fixture.path,
        "--generator-version",
        str(ownership.fixture.generator_version),
        "--replays",
        str(field_set.replays.value),
        "--max-examples",
        str(field_set.max_examples.value),
        *(arg for path in ownership.property_files for arg in ("--properties", path)),
        "--out",
        OUT_DIR,
        "--freezes",
        gate.freezes_dir,
        "--corpus",
        gate.corpus_dir,
        "--max-freeze-hours",
        str(gate.max_freeze_hours),
        "--replay-timeout-seconds",
        str(gate.replay_timeout),
        # JUnit XML for `pants test --test-report` (and CI test reporters).
        "--junit-xml",
        f"{XML_DIR}/{field_set.address.path_safe_spec}.xml",
        "--suite",
        field_set.address.spec,
        *(arg for root in code.source_roots for arg in ("--import-path", root)),
        *(arg for condition in field_set.conditions.value or () for arg in ("--condition", condition)),
        # Where `pants test` puts the artifacts (extra output): the freeze command a flake's
        # line prints names them there.
        "--artifacts-at",
        str(distdir.relpath / "test" / field_set.address.path_safe_spec),
    ]
    inputs = [
        ownership.oracle_digest,
        code.source_files.snapshot.digest,
        await Get(Digest, CreateDigest([Directory(OUT_DIR), Directory(XML_DIR)])),
    ]
    if gate.enabled:
        changed = await Get(ChangedPaths, ChangedPathsRequest())
        lists = {
            "changed.txt": relevant_changes(changed.paths, ownership, gate.freezes_dir),
            "impl.txt": ownership.impl,
            "oracle.txt": ownership.oracle,
        }
        inputs.append(
            await Get(
                Digest,
                CreateDigest([FileContent(f"{_INPUTS_DIR}/{name}", _lines(paths)) for name, paths in lists.items()]),
            )
        )
        inputs += [freezes.digest, corpus.digest]
        argv += [
            "--diff-paths",
            f"{_INPUTS_DIR}/changed.txt",
            "--impl-paths",
            f"{_INPUTS_DIR}/impl.txt",
            "--oracle-paths",
            f"{_INPUTS_DIR}/oracle.txt",
        ]
    else:
        argv.append("--check-only")
    # A pass that rests on a freeze must be re-decided once the freeze expires, and time
    # is no input Pants can hash: with freezes present, never serve a cached result.
    uncacheable = test_subsystem.force or (gate.enabled and bool(freezes.files))
    process = await Get(
        Process,
        VenvPexProcess(
            runner,
            argv=argv,
            input_digest=await Get(Digest, MergeDigests(inputs)),
            output_directories=(OUT_DIR, XML_DIR),
            extra_env={**test_extra_env.env, "HYPOTHESIS_STORAGE_DIRECTORY": "__witness_gate_hypothesis"},
            description=f"witness-gate {field_set.address}",
            level=LogLevel.DEBUG,
            cache_scope=ProcessCacheScope.PER_SESSION if uncacheable else ProcessCacheScope.SUCCESSFUL,
        ),
    )
    result = await Get(FallibleProcessResult, Process, process)
    artifacts, xml_results = await MultiGet(
        Get(Snapshot, OutputSubset(result.output_digest, d)) for d in (OUT_DIR, XML_DIR)
    )
    verdict = await Get(DigestContents, DigestSubset(artifacts.digest, PathGlobs([GATE_JSON])))
    exit_code, refusal = target_exit_code(result.exit_code, verdict[0].content if verdict else None)
    stderr = result.stderr + (f"witness-gate: {refusal}\n".encode() if refusal else b"")
    return TestResult(
        exit_code=exit_code,
        stdout=result.stdout.decode(),
        stdout_digest=result.stdout_digest,
        stderr=stderr.decode(errors="replace"),
        stderr_digest=FileDigest(hashlib.sha256(stderr).hexdigest(), len(stderr)),
        addresses=(field_set.address,),
        output_setting=test_subsystem.output,
        result_metadata=result.metadata,
        xml_results=xml_results,
        extra_output=artifacts,
        log_extra_output=True,
    )


def rules():
    return [
        *collect_rules(),
        *WitnessGateTestRequest.rules(),
        *ownership.rules(),
        *changed_paths.rules(),
        *runner_pex.rules(),
    ]
