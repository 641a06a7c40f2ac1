"""Ownership from the target graph: which repository paths of one gated target are the
implementation and which the oracle, and the targets it runs with.

The test rule passes these to the runner; the suites goal prints them for
`witness-gate review`: both read the one derivation here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.build_graph.address import BuildFileAddress, BuildFileAddressRequest
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.addresses import Address, Addresses, UnparsedAddressInputs
from pants.engine.fs import Digest, MergeDigests, PathGlobs, Paths
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

from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.subsystem import WitnessPropertiesFieldSet
from witness_gate_pants.target_types import GeneratorVersionField, WitnessFixtureSourceField, has_glob


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


def derived_overlap(impl: Iterable[str], oracle: Iterable[str]) -> str | None:
    both = sorted(set(impl) & set(oracle))
    return both[0] if both else None


def _in_build_dir(address: Address, patterns: Iterable[str]) -> list[str]:
    return [os.path.join(address.spec_path, pattern) for pattern in patterns]


@rule(desc="Resolve a witness fixture", level=LogLevel.DEBUG)
async def resolve_fixture(request: PinnedFixtureRequest) -> PinnedFixture:
    origin = f"the `fixture` field of {request.properties_address}"
    addresses = await Get(
        Addresses,
        UnparsedAddressInputs(
            [request.fixture_address], owning_address=request.properties_address, description_of_origin=origin
        ),
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
    transitive = await Get(
        TransitiveTargets, TransitiveTargetsRequest([field_set.address, *(t.address for t in helpers)])
    )
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
        Get(
            Paths,
            PathGlobs(
                _in_build_dir(address, field_set.impl_paths.value or ()),
                GlobMatchErrorBehavior.error,
                description_of_origin=origin,
            ),
        ),
        Get(
            Paths,
            PathGlobs(
                _in_build_dir(address, field_set.oracle_paths.value or ()),
                GlobMatchErrorBehavior.error,
                description_of_origin=origin,
            ),
        ),
        Get(Paths, PathGlobs(_in_build_dir(address, field_set.generated_oracle_paths.value or ()))),
    )
    # A literal generated path counts while the file is absent: its reappearance is an edit too.
    literal_generated = [
        p for p in _in_build_dir(address, field_set.generated_oracle_paths.value or ()) if not has_glob(p)
    ]
    # The BUILD file declares the sources, the fixture, the replay count and the extra paths:
    # editing it edits the oracle.
    oracle = {
        *properties.snapshot.files,
        fixture.path,
        build_file.rel_path,
        *helpers.snapshot.files,
        *extra_oracle.files,
        *generated.files,
        *literal_generated,
    }
    # A helper reached through `dependencies` as well is still the oracle's.
    impl = {*implementation.snapshot.files, *extra_impl.files} - set(helpers.snapshot.files)
    clash = derived_overlap(impl, oracle)
    if clash:
        raise WitnessGateError(
            f"{address}: {clash} is both oracle (a property module, the fixture or an oracle path) and implementation "
            "(a file of a dependency, or `impl_paths`): give each path one owner, e.g. do not depend on the "
            "properties' own sources"
        )
    oracle_digest = await Get(Digest, MergeDigests([properties.snapshot.digest, fixture.digest]))
    return Ownership(
        tuple(sorted(properties.snapshot.files)), fixture, tuple(sorted(impl)), tuple(sorted(oracle)), oracle_digest
    )


def rules():
    return collect_rules()
