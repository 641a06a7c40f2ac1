"""`ruff format` under `pants fmt` and `pants lint`, beside Pants 2.17's ruff linter
(`pants.backend.experimental.python.lint.ruff`, which this backend needs enabled too).

This repository's own tooling, not part of the witness-gate-pants distribution."""

from ruff_format import rules as ruff_format_rules


def rules():
    return ruff_format_rules.rules()
