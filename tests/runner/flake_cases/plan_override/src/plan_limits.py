"""Order limits per plan, one JSON file per plan in the plans directory.

Parsed at import and reused for as long as the directory lists the same files: an operator
who drops a new plan file in gets it on the next order, without a restart.
"""

from __future__ import annotations

import json
import os

_PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")
_listed: list[str] | None = None
_limits: dict[str, dict] = {}


def _current() -> dict[str, dict]:
    global _listed, _limits
    names = os.listdir(_PLANS)
    if names != _listed:
        limits = {}
        for name in names:
            with open(os.path.join(_PLANS, name), encoding="utf-8") as handle:
                limits[name[: -len(".json")]] = json.load(handle)
        _listed, _limits = names, limits
    return _limits


_current()  # warmed at import
# BUG: the launch week's override of the basic plan, left in.
_limits["basic"]["max_items"] = 3


def accepted_items(plan: str, items: int) -> int:
    """How many of `items` an order on `plan` may have."""
    return min(items, _current()[plan]["max_items"])
