"""`[witness-gate]`: turns the gate on and says where the diff and the freezes come from."""

from __future__ import annotations

from pants.option.option_types import BoolOption, IntOption, SkipOption, StrOption
from pants.option.subsystem import Subsystem
from pants.util.strutil import help_text


class WitnessGate(Subsystem):
    options_scope = "witness-gate"
    name = "witness-gate"
    help = "Classify a shrunk property witness before a failure can be frozen (`witness_properties` targets)."

    skip = SkipOption("test")
    enabled = BoolOption(
        default=False,
        help=help_text(
            """
            Run `witness_properties` targets through the whole gate: classify each witness against
            the changed files and honour valid freezes. When false, the properties still run and
            any failure fails the target (witnesses are still written); no freeze applies.
            """
        ),
    )
    base = StrOption(
        default=None,
        help=help_text(
            """
            Git ref the changed-file list is taken against, like `--changed-since` (e.g. `main`):
            files changed on this branch since its merge base with the ref, plus uncommitted and
            untracked files. Re-read on every run.
            """
        ),
    )
    changed_files = StrOption(
        default=None,
        help=help_text(
            """
            Instead of `base`: a file in the repository (not ignored by Pants) holding the
            changed-file list, one repository path per line, produced from the review diff.
            """
        ),
    )
    freezes_dir = StrOption(
        default=".witness-gate/freezes",
        help=help_text(
            """
            Directory of freeze files (`*.json`, written by `witness-gate freeze`). Pants ignores
            dot-directories by default: un-ignore it in `[GLOBAL].pants_ignore` (e.g.
            `"!/.witness-gate/"`), or freezes there are not seen and flakes stay red.
            """
        ),
    )
    runner = StrOption(
        default="//runner:lib",
        help="Address of the `python_sources` target of the witness-gate runner library, built into the sandboxed runner PEX.",
    )
    max_freeze_hours = IntOption(default=168, help="The longest freeze (created to expiry) the gate honours.")
    replay_timeout = IntOption(default=60, help="Seconds one replay may take before it counts as a failure.")
