"""The reliability figures of bench/reliability.py as test outcomes."""

from __future__ import annotations

import reliability


def assert_clean(figure: reliability.Figure) -> None:
    print(figure.line)
    assert figure.clean, "\n".join([figure.line, *figure.problems[:20]])
