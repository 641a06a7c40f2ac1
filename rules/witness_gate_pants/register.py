"""witness-gate for Pants: `witness_fixture` and `witness_properties` targets, run by `pants test`.

Enable with `backend_packages.add = ["witness_gate_pants"]` and `[witness-gate].enabled = true`.
"""

from witness_gate_pants import rules as gate_rules
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget


def target_types():
    return [WitnessFixtureTarget, WitnessPropertiesTarget]


def rules():
    return [*gate_rules.rules()]
