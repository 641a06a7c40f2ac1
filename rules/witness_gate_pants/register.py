"""witness-gate for Pants: `witness_fixture` and `witness_properties` targets, run by `pants test`,
and `pants witness-gate-suites`, which tells `witness-gate review` what the graph declares.

Enable with `backend_packages.add = ["witness_gate_pants"]` and `[witness-gate].enabled = true`.
"""

from witness_gate_pants import rules as gate_rules
from witness_gate_pants import suites
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget


def target_types():
    return [WitnessFixtureTarget, WitnessPropertiesTarget]


def rules():
    return [*gate_rules.rules(), *suites.rules()]
