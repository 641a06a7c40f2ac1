"""witness-gate: classify a shrunk property witness before a failure can be frozen.

The public surface is `property` (declare a property) and `__version__`; the rest
of the package is the runner behind the `witness-gate` command.
"""

from witness_gate.properties import property

__all__ = ["property", "__version__"]
__version__ = "0.1.0"
