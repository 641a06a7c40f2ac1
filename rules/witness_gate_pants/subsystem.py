"""`[witness-gate]`: turns the gate on and says where the diff and the freezes come from; and
the fields of a gated target that its rules read (as Pants' pytest subsystem holds its
field set, so the test goal, ownership and the suites goal share one)."""

from __future__ import annotations

from dataclasses import dataclass

from pants.core.goals.test import TestFieldSet
from pants.option.option_types import BoolOption, IntOption, StrListOption, StrOption
from pants.option.subsystem import Subsystem

# softwrap, not help_text: the same text for a str (help_text calls softwrap), typed as the
# str an option's help takes.
from pants.util.strutil import softwrap

from witness_gate_pants.target_types import (
    ConditionsField,
    GeneratedOraclePathsField,
    ImplPathsField,
    MaxExamplesField,
    OracleDependenciesField,
    OraclePathsField,
    ReplaysField,
    WitnessPropertiesDependenciesField,
    WitnessPropertiesFixtureField,
    WitnessPropertiesSourcesField,
)


class WitnessGate(Subsystem):
    options_scope = "witness-gate"
    name = "witness-gate"
    help = "Classify a shrunk property witness before a failure can be frozen (`witness_properties` targets)."

    # Pants gives every test tool a `skip` option; the gate has no off switch, so this one
    # only exists to be refused (see the partitioner in test.py).
    skip = BoolOption(
        default=False,
        help="Refused: the gate has no off switch. Setting it fails `pants test` instead of reporting gated targets "
        "green unrun; `enabled = false` still runs the properties.",
    )
    enabled = BoolOption(
        default=False,
        help=softwrap(
            """
            Run `witness_properties` targets through the whole gate: classify each witness against
            the changed files and honour valid freezes. When false, the properties still run and
            any failure fails the target (witnesses are still written); no freeze applies.
            """
        ),
    )
    base = StrOption(
        default=None,
        help=softwrap(
            """
            Git ref the changed-file list is taken against, like `--changed-since` (e.g. `main`):
            files changed on this branch since its merge base with the ref, plus uncommitted and
            untracked files, a rename as both its sides. Re-read on every run. A changed name the
            list cannot carry (a line break in it, say) fails the run rather than drop out.
            """
        ),
    )
    changed_files = StrOption(
        default=None,
        help=softwrap(
            """
            Instead of `base`: a file in the repository (not ignored by Pants) holding the
            changed-file list, one repository path per line, produced from the review diff.
            """
        ),
    )
    freezes_dir = StrOption(
        default=".witness-gate/freezes",
        help=softwrap(
            """
            Directory of freeze files (`*.json`, written by `witness-gate freeze`). Pants ignores
            dot-directories by default: un-ignore it in `[GLOBAL].pants_ignore` (e.g.
            `"!/.witness-gate/"`), or freezes there are not seen and flakes stay red.
            """
        ),
    )
    per_change_search = BoolOption(
        default=False,
        help=softwrap(
            """
            Whether `witness-gate review` searches more inputs for each reviewed change: after the
            pin's fixed schedule, which always runs, seeds drawn from a random salt the review
            draws (recorded in the lock, so the search replays). `pants test` keeps the pin's
            schedule.
            """
        ),
    )
    corpus_dir = StrOption(
        default=".witness-gate/corpus",
        help=softwrap(
            """
            Directory of retained witnesses (`*.json`, kept there by `witness-gate retain`): every
            gated target replays those of its property modules with its own, so a failure found
            once blocks every later run that brings it back. Un-ignore it like `freezes_dir`.
            """
        ),
    )
    install_from_resolve = StrOption(
        default=None,
        help=softwrap(
            """
            The resolve (a name from `[python].resolves`) the runner is installed from, the way
            Pants installs its own tools: it must provide `requirements`, e.g. `witness-gate==0.4.0`,
            next to the team's own Hypothesis. The runner is built once per resolve and shared by
            every `witness_properties` target.
            """
        ),
    )
    requirements = StrListOption(
        default=["witness-gate"],
        help="With `install_from_resolve`: the requirements of the runner, at the versions the resolve's lockfile "
        "pins.",
    )
    runner = StrOption(
        default=None,
        help=softwrap(
            """
            Instead of `install_from_resolve`: the address of a `python_sources` target of the
            runner library in this repository (witness-gate's own development uses `//runner:lib`).
            """
        ),
    )
    max_freeze_hours = IntOption(default=168, help="The longest freeze (created to expiry) the gate honours.")
    replay_timeout = IntOption(default=60, help="Seconds one replay may take before it counts as a failure.")


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
