"""witness-gate for Pants: `witness_fixture` and `witness_properties` targets, run by `pants test`,
and `pants witness-gate-suites`, which tells `witness-gate review` what the graph declares.

Enable with `backend_packages.add = ["witness_gate_pants"]` and `[witness-gate].enabled = true`.

Laid out as Pants' own backends, one module a concept: `target_types` and `subsystem`; the
two goals, `test` (the test rule) and `suites`, over the rules they share: `ownership`,
`changed_paths`, `git` and `runner_pex` (docs/layout.md).
"""

from witness_gate_pants import changed_paths, git, ownership, runner_pex, suites
from witness_gate_pants import test as test_goal
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget


def target_types():
    return [WitnessFixtureTarget, WitnessPropertiesTarget]


def rules():
    return [
        # Util rules
        *changed_paths.rules(),
        *git.rules(),
        *ownership.rules(),
        *runner_pex.rules(),
        # Goals
        *test_goal.rules(),
        *suites.rules(),
    ]
