"""The error every part of the plugin raises about a target or an option it cannot run with."""


class WitnessGateError(Exception):
    """A target or an option the gate cannot run with; Pants prints it and fails."""
