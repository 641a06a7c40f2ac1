"""witness-gate: classify a shrunk property witness before a failure can be frozen.

The public surface is `property` (declare a property) and `__version__`; the rest
of the package is the runner behind the `witness-gate` command.
"""

from __future__ import annotations

from typing import Any

__all__ = ["property", "__version__"]
__version__ = "0.4.0"  # the single source: tests/distribution/versions_test.py checks every other copy


def __getattr__(name: str) -> Any:
    # Loaded on first use: the CLI's start-up must not pay for the property machinery.
    if name == "property":
        from witness_gate.properties import property as declare

        return declare
    raise AttributeError(f"module 'witness_gate' has no attribute {name!r}")
