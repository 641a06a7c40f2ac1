"""`pants test` for `witness_properties`: one sandboxed runner process per target.

The plugin only gathers inputs (the pinned fixture, the property modules, the ownership
derived from the target graph, the changed-file list and the freezes) and runs the
runner PEX's `gate` command on them; every verdict is the runner's. Anything that can
change a verdict reaches the process through its argv or its input digest, so Pants'
cache can never serve a stale one; freezes, whose expiry depends on the clock, make the
process uncacheable instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable

from pants.backend.python.target_types import EntryPoint
from pants.backend.python.util_rules.interpreter_constraints import InterpreterConstraints
from pants.backend.python.util_rules.pex import Pex, PexRequest, VenvPex, VenvPexProcess
from pants.backend.python.util_rules.pex_from_targets import PexFromTargetsRequest, RequirementsPexRequest
from pants.backend.python.util_rules.pex_requirements import PexRequirements, Resolve
from pants.backend.python.util_rules.python_sources import PythonSourceFiles, PythonSourceFilesRequest
from pants.base.build_environment import get_buildroot
from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.build_graph.address import BuildFileAddress, BuildFileAddressRequest
from pants.core.goals.test import TestExtraEnv, TestFieldSet, TestRequest, TestResult, TestSubsystem
from pants.core.util_rules.distdir import DistDir
from pants.core.util_rules.partitions import Partition, PartitionerType, Partitions
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.core.util_rules.system_binaries import SEARCH_PATHS, BinaryPathRequest, BinaryPaths, BinaryPathTest
from pants.engine.addresses import Address, Addresses, UnparsedAddressInputs
from pants.engine.fs import CreateDigest, Digest, DigestContents, DigestSubset, Directory, FileContent, FileDigest, MergeDigests, PathGlobs, Paths, RemovePrefix, Snapshot
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    SourcesField,
    Target,
    Targets,
    TransitiveTargets,
    TransitiveTargetsRequest,
    WrappedTarget,
    WrappedTargetRequest,
)
from pants.util.logging import LogLevel

from witness_gate_pants.subsystem import WitnessGate
from witness_gate_pants.target_types import (
    ConditionsField,
    GeneratedOraclePathsField,
    GeneratorVersionField,
    ImplPathsField,
    MaxExamplesField,
    OracleDependenciesField,
    OraclePathsField,
    ReplaysField,
    WitnessFixtureSourceField,
    WitnessPropertiesDependenciesField,
    WitnessPropertiesFixtureField,
    WitnessPropertiesSourcesField,
    has_glob,
)

OUT_DIR = "__witness_gate_out"
GATE_JSON = "gate.json"
_VERDICTS = {"pass": 0, "blocked": 1, "oracle_review": 3, "incomplete": 4}
XML_DIR = "__witness_gate_xml"
_INPUTS_DIR = "__witness_gate_in"


class WitnessGateError(Exception):
    """A target or an option the gate cannot run with; Pants prints it and fails."""


@dataclass(frozen=True)
class WitnessPropertiesFieldSet(TestFieldSet):
    required_fields = (WitnessPropertiesSourcesField, WitnessPropertiesFixtureField)

    sources: WitnessPropertiesSourcesField
    fixture: WitnessPropertiesFixtureField
    dependencies: WitnessPropertiesDependenciesField
    oracle_dependencies: OracleDependenciesField
    replays: ReplaysField
    max_examples: MaxExamplesField
    impl_paths: ImplPathsField
    oracle_paths: OraclePathsField
    generated_oracle_paths: GeneratedOraclePathsField
    conditions: ConditionsField


class WitnessGateTestRequest(TestRequest):
    tool_subsystem = WitnessGate
    field_set_type = WitnessPropertiesFieldSet
    # Pants' own partitioners return nothing when `[witness-gate].skip` is set, which would
    # turn every gated target green by omission; ours refuses instead.
    partitioner_type = PartitionerType.CUSTOM


@dataclass(frozen=True)
class _OnePerTarget:
    @property
    def description(self) -> None:
        return None


@dataclass(frozen=True)
class PinnedFixtureRequest:
    properties_address: Address
    fixture_address: str


@dataclass(frozen=True)
class PinnedFixture:
    path: str
    generator_version: int
    digest: Digest


@dataclass(frozen=True)
class Ownership:
    """Repository paths of each side of one target, and the oracle files' contents."""

    property_files: tuple[str, ...]
    fixture: PinnedFixture
    impl: tuple[str, ...]
    oracle: tuple[str, ...]
    oracle_digest: Digest


@dataclass(frozen=True)
class OwnershipRequest:
    field_set: WitnessPropertiesFieldSet


@dataclass(frozen=True)
class GatedClosureRequest:
    field_set: WitnessPropertiesFieldSet


@dataclass(frozen=True)
class GatedClosure:
    """The targets one gated target runs with: its oracle helpers, and the transitive
    closure of the properties and the helpers (the code under test among them)."""

    helpers: Targets
    closure: tuple[Target, ...]

    @property
    def addresses(self) -> tuple[Address, ...]:
        return tuple(target.address for target in self.closure)


@dataclass(frozen=True)
class ChangedPaths:
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ChangedPathsRequest:
    pass


@dataclass(frozen=True)
class RunnerPexRequest:
    """The one runner of the session (its inputs are options, not targets)."""


@dataclass(frozen=True)
class RunnerPex:
    request: PexRequest


@dataclass(frozen=True)
class TargetRunnerRequest:
    addresses: tuple[Address, ...]


# --- pure helpers -------------------------------------------------------------------


def parse_changed_list(text: str, source: str) -> tuple[str, ...]:
    """One repository path per line; blank lines and malformed paths are refused."""
    paths = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line == "" and number == text.count("\n") + 1:
            continue  # the final newline
        problem = _path_problem(line)
        if problem:
            raise WitnessGateError(f"{source}: line {number}: {problem}")
        paths.append(line)
    return tuple(sorted(set(paths)))


def _path_problem(path: str) -> str | None:
    # The runner's rule (witness_gate.paths.repo_path_problem), restated: this runs on Pants'
    # interpreter, which cannot import the runner, and a line it let through unowned would
    # be dropped before the runner could refuse it. Both run tests/paths/cases.json, which
    # holds them to the same verdicts and words.
    if not path:
        return "blank line: an empty path"
    if "\0" in path:
        return f"{path!r} contains NUL"
    if "\r" in path:
        return "carriage return (CRLF line endings?)"
    if "\\" in path:
        return f"{path!r} contains a backslash; use '/'"
    if path.startswith("/"):
        return f"{path!r} is an absolute path; give it relative to the repository root"
    if path != path.strip():
        return f"{path!r} has leading or trailing whitespace"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"{path!r} is not normalized (empty, '.' or '..' segment)"
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
    if not isinstance(record, dict) or record.get("verdict") not in _VERDICTS or record.get("exit_code") != _VERDICTS[record["verdict"]]:
        return failing, "gate.json has no consistent verdict: the target fails closed"
    if record["verdict"] == "pass" and process_exit == 0:
        return 0, None
    if record["verdict"] == "pass":
        return failing, f"the runner exited {process_exit} although gate.json says pass: the target fails closed"
    return failing, None if process_exit != 0 else f"gate.json says {record['verdict']} although the runner exited 0: the target fails closed"


def derived_overlap(impl: Iterable[str], oracle: Iterable[str]) -> str | None:
    both = sorted(set(impl) & set(oracle))
    return both[0] if both else None


def _lines(paths: Iterable[str]) -> bytes:
    return "".join(f"{path}\n" for path in paths).encode()


def _in_build_dir(address: Address, patterns: Iterable[str]) -> list[str]:
    return [os.path.join(address.spec_path, pattern) for pattern in patterns]


# --- rules --------------------------------------------------------------------------


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


@rule(desc="Resolve a witness fixture", level=LogLevel.DEBUG)
async def resolve_fixture(request: PinnedFixtureRequest) -> PinnedFixture:
    origin = f"the `fixture` field of {request.properties_address}"
    addresses = await Get(
        Addresses, UnparsedAddressInputs([request.fixture_address], owning_address=request.properties_address, description_of_origin=origin)
    )
    wrapped = await Get(WrappedTarget, WrappedTargetRequest(addresses[0], description_of_origin=origin))
    target = wrapped.target
    if not target.has_field(WitnessFixtureSourceField):
        raise WitnessGateError(f"{origin} names {target.address}, a `{target.alias}` target, not a `witness_fixture`")
    sources = await Get(SourceFiles, SourceFilesRequest([target[WitnessFixtureSourceField]]))
    [path] = sources.snapshot.files
    return PinnedFixture(path, target[GeneratorVersionField].value, sources.snapshot.digest)


@rule(desc="Gather a gated target's closure", level=LogLevel.DEBUG)
async def gated_closure(request: GatedClosureRequest) -> GatedClosure:
    field_set = request.field_set
    helpers = await Get(Targets, UnparsedAddressInputs, field_set.oracle_dependencies.to_unparsed_address_inputs())
    transitive = await Get(TransitiveTargets, TransitiveTargetsRequest([field_set.address, *(t.address for t in helpers)]))
    return GatedClosure(helpers, tuple(transitive.closure))


@rule(desc="Derive implementation and oracle paths", level=LogLevel.DEBUG)
async def derive_ownership(request: OwnershipRequest) -> Ownership:
    field_set = request.field_set
    address = field_set.address
    fixture, properties, gated, build_file = await MultiGet(
        Get(PinnedFixture, PinnedFixtureRequest(address, field_set.fixture.value)),
        Get(SourceFiles, SourceFilesRequest([field_set.sources])),
        Get(GatedClosure, GatedClosureRequest(field_set)),
        Get(BuildFileAddress, BuildFileAddressRequest(address, description_of_origin="witness-gate ownership")),
    )
    dependency_sources = [t[SourcesField] for t in gated.closure if t.address != address and t.has_field(SourcesField)]
    origin = f"the path fields of {address}"
    implementation, helpers, extra_impl, extra_oracle, generated = await MultiGet(
        Get(SourceFiles, SourceFilesRequest(dependency_sources)),
        Get(SourceFiles, SourceFilesRequest([t[SourcesField] for t in gated.helpers if t.has_field(SourcesField)])),
        Get(Paths, PathGlobs(_in_build_dir(address, field_set.impl_paths.value or ()), GlobMatchErrorBehavior.error, description_of_origin=origin)),
        Get(Paths, PathGlobs(_in_build_dir(address, field_set.oracle_paths.value or ()), GlobMatchErrorBehavior.error, description_of_origin=origin)),
        Get(Paths, PathGlobs(_in_build_dir(address, field_set.generated_oracle_paths.value or ()))),
    )
    # A literal generated path counts while the file is absent: its reappearance is an edit too.
    literal_generated = [p for p in _in_build_dir(address, field_set.generated_oracle_paths.value or ()) if not has_glob(p)]
    # The BUILD file declares the sources, the fixture, the replay count and the extra paths:
    # editing it edits the oracle.
    oracle = {*properties.snapshot.files, fixture.path, build_file.rel_path, *helpers.snapshot.files, *extra_oracle.files, *generated.files,
              *literal_generated}
    # A helper reached through `dependencies` as well is still the oracle's.
    impl = {*implementation.snapshot.files, *extra_impl.files} - set(helpers.snapshot.files)
    clash = derived_overlap(impl, oracle)
    if clash:
        raise WitnessGateError(
            f"{address}: {clash} is both oracle (a property module, the fixture or an oracle path) and implementation "
            f"(a file of a dependency, or `impl_paths`): give each path one owner, e.g. do not depend on the properties' own sources"
        )
    oracle_digest = await Get(Digest, MergeDigests([properties.snapshot.digest, fixture.digest]))
    return Ownership(tuple(sorted(properties.snapshot.files)), fixture, tuple(sorted(impl)), tuple(sorted(oracle)), oracle_digest)


@dataclass(frozen=True)
class GitRequest:
    """One git command in the build root's repository, run afresh in every session."""

    args: tuple[str, ...]


@dataclass(frozen=True)
class GitResult:
    exit_code: int
    stdout: bytes
    stderr: bytes

    def message(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else f"exit {self.exit_code}"


@rule(desc="Run git", level=LogLevel.DEBUG)
async def run_git(request: GitRequest) -> GitResult:
    search = BinaryPathRequest(binary_name="git", search_path=SEARCH_PATHS, test=BinaryPathTest(["--version"]))
    found = await Get(BinaryPaths, BinaryPathRequest, search)
    git = found.first_path_or_raise(search, rationale="read the changed-file list for [witness-gate].base")
    # The repository is outside the sandbox, so the process must never be served from a
    # cache: PER_SESSION runs it once per `pants` run, like Pants' own uncacheable git reads.
    # Its environment is empty: no GIT_DIR or GIT_INDEX_FILE of the caller redirects it.
    result = await Get(
        FallibleProcessResult,
        Process(
            (git.path, "-C", get_buildroot(), *request.args),
            description=f"git {' '.join(request.args[:2])}",
            level=LogLevel.DEBUG,
            cache_scope=ProcessCacheScope.PER_SESSION,
        ),
    )
    return GitResult(result.exit_code, result.stdout, result.stderr)


def nul_separated_paths(output: bytes) -> list[str]:
    """Git's `-z` output: one path per NUL, unquoted; bytes that are not UTF-8 are kept as
    surrogates (and refused by `unlistable_paths`), never replaced."""
    return [field.decode("utf-8", "surrogateescape") for field in output.split(b"\0") if field]


def unlistable_paths(paths: Iterable[str]) -> list[str]:
    """Changed paths the changed-file list (one path per line) cannot carry: the ones
    `witness-gate review` refuses to list too (it blocks on them). A name that is not UTF-8
    holds surrogates, which are not printable."""
    return [path for path in paths if _path_problem(path) is not None or not path.isprintable()]


# Paths relative to the build root, NUL-separated, no rename detection (a rename is both
# its sides), whatever the repository's config says about renames or relative output.
_DIFF = ("diff", "-z", "--name-only", "--no-renames", "--relative", "--no-ext-diff", "--no-textconv")


@rule(desc="Read the changed-file list", level=LogLevel.DEBUG)
async def read_changed_paths(_: ChangedPathsRequest, gate: WitnessGate) -> ChangedPaths:
    if gate.changed_files:
        contents = await Get(
            DigestContents,
            PathGlobs([gate.changed_files], GlobMatchErrorBehavior.error, description_of_origin="the option `[witness-gate].changed_files`"),
        )
        try:
            text = contents[0].content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WitnessGateError(f"{gate.changed_files}: not UTF-8 (byte {error.start})") from None
        return ChangedPaths(parse_changed_list(text, gate.changed_files))
    if not gate.base:
        raise WitnessGateError(
            "[witness-gate].enabled needs the changed-file list: set [witness-gate].base (a git ref such as main) "
            "or [witness-gate].changed_files (a file of paths from the review diff)"
        )
    if gate.base.startswith("-"):
        raise WitnessGateError(f"[witness-gate].base is {gate.base!r}: not a git ref")
    toplevel = await Get(GitResult, GitRequest(("rev-parse", "--show-toplevel")))
    if toplevel.exit_code != 0:
        raise WitnessGateError(f"[witness-gate].base is {gate.base!r}, but {get_buildroot()} is not in a git repository ({toplevel.message()})")
    # What the branch changed since its merge base with the base, what is uncommitted
    # (staged or not) and what is untracked; as Pants' `--changed-since` reads it, but from
    # git's NUL-separated output, so no name is split at a space or quoted.
    committed, uncommitted, untracked = await MultiGet(
        Get(GitResult, GitRequest((*_DIFF, f"{gate.base}...HEAD", "--"))),
        Get(GitResult, GitRequest((*_DIFF, "HEAD", "--"))),
        Get(GitResult, GitRequest(("ls-files", "-z", "--others", "--exclude-standard"))),
    )
    for done in (committed, uncommitted, untracked):
        if done.exit_code != 0:  # git's own message (an unknown ref, say) is the useful part
            raise WitnessGateError(f"git could not diff against [witness-gate].base {gate.base!r}: {done.message()}")
    # ls-files names an untracked nested repository as "dir/"; Pants' helper listed "dir".
    paths = {path.rstrip("/") for path in nul_separated_paths(untracked.stdout)}
    paths.update(nul_separated_paths(committed.stdout), nul_separated_paths(uncommitted.stdout))
    refused = sorted(unlistable_paths(paths))
    if refused:
        shown = ", ".join(repr(path) for path in refused[:5]) + (f" and {len(refused) - 5} more" if len(refused) > 5 else "")
        raise WitnessGateError(
            f"[witness-gate].base {gate.base!r}: {len(refused)} changed path(s) the changed-file list cannot carry "
            f"(a line break, a control character, surrounding whitespace, a backslash or bytes that are not UTF-8 "
            f"in the name): {shown}. The gate fails closed rather than drop them, as `witness-gate review` blocks "
            f"on them; rename them"
        )
    return ChangedPaths(tuple(sorted(paths)))


RUNNER_MAIN = EntryPoint.parse("witness_gate.cli:main")


def runner_source_problem(runner: str | None, install_from_resolve: str | None) -> str | None:
    """Why the options do not say where the runner comes from, or None."""
    if runner and install_from_resolve:
        return "[witness-gate] sets both `runner` and `install_from_resolve`: the runner comes from one place; unset one"
    if not runner and not install_from_resolve:
        return (
            "[witness-gate] does not say where the runner comes from: add `witness-gate==<version>` to a resolve "
            "(e.g. 3rdparty/python/requirements.txt, then `pants generate-lockfiles`) and set "
            "`install_from_resolve = \"<that resolve>\"`, or set `runner` to the address of the runner's sources"
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
            PexRequest(output_filename="witness_gate_runner.pex", internal_only=True, requirements=requirements,
                       interpreter_constraints=InterpreterConstraints(), main=RUNNER_MAIN, description="Building the witness-gate runner")
        )
    runner = await Get(
        Addresses, UnparsedAddressInputs([gate.runner], owning_address=None, description_of_origin="the option `[witness-gate].runner`")
    )
    request = await Get(
        PexRequest,
        PexFromTargetsRequest(
            runner, output_filename="witness_gate_runner.pex", internal_only=True, main=RUNNER_MAIN, description="Building the witness-gate runner"
        ),
    )
    return RunnerPex(request)


@rule(desc="Build the witness-gate runner with a target's requirements", level=LogLevel.DEBUG)
async def runner_for_target(request: TargetRunnerRequest) -> VenvPex:
    """The runner plus the third-party requirements of one target's closure, the way Pants'
    pytest rule composes its runner: one build per resolve and requirement set, shared by
    every target that has the same."""
    runner, requirements = await MultiGet(Get(RunnerPex, RunnerPexRequest()), Get(Pex, RequirementsPexRequest(request.addresses)))
    return await Get(VenvPex, PexRequest, dataclasses.replace(runner.request, pex_path=(requirements,)))


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
        "--fixture", ownership.fixture.path,
        "--generator-version", str(ownership.fixture.generator_version),
        "--replays", str(field_set.replays.value),
        "--max-examples", str(field_set.max_examples.value),
        *(arg for path in ownership.property_files for arg in ("--properties", path)),
        "--out", OUT_DIR,
        "--freezes", gate.freezes_dir,
        "--corpus", gate.corpus_dir,
        "--max-freeze-hours", str(gate.max_freeze_hours),
        "--replay-timeout-seconds", str(gate.replay_timeout),
        # JUnit XML for `pants test --test-report` (and CI test reporters).
        "--junit-xml", f"{XML_DIR}/{field_set.address.path_safe_spec}.xml",
        "--suite", field_set.address.spec,
        *(arg for root in code.source_roots for arg in ("--import-path", root)),
        *(arg for condition in field_set.conditions.value or () for arg in ("--condition", condition)),
        # Where `pants test` puts the artifacts (extra output): the freeze command a flake's line prints names them there.
        "--artifacts-at", str(distdir.relpath / "test" / field_set.address.path_safe_spec),
    ]
    inputs = [ownership.oracle_digest, code.source_files.snapshot.digest, await Get(Digest, CreateDigest([Directory(OUT_DIR), Directory(XML_DIR)]))]
    if gate.enabled:
        changed = await Get(ChangedPaths, ChangedPathsRequest())
        lists = {
            "changed.txt": relevant_changes(changed.paths, ownership, gate.freezes_dir),
            "impl.txt": ownership.impl,
            "oracle.txt": ownership.oracle,
        }
        inputs.append(await Get(Digest, CreateDigest([FileContent(f"{_INPUTS_DIR}/{name}", _lines(paths)) for name, paths in lists.items()])))
        inputs += [freezes.digest, corpus.digest]
        argv += [
            "--diff-paths", f"{_INPUTS_DIR}/changed.txt",
            "--impl-paths", f"{_INPUTS_DIR}/impl.txt",
            "--oracle-paths", f"{_INPUTS_DIR}/oracle.txt",
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
    artifacts, xml_results = await MultiGet(Get(Snapshot, OutputSubset(result.output_digest, d)) for d in (OUT_DIR, XML_DIR))
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
    return (*collect_rules(), *WitnessGateTestRequest.rules())
