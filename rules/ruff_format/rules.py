"""`ruff format` as a formatter of `pants fmt` (and so of `pants lint`'s check that no
formatter would change a file).

Pants 2.17's ruff backend (`pants.backend.experimental.python.lint.ruff`) runs only
`ruff` (lint, under `pants lint`) and `ruff --fix` (under `pants fix`): ruff's formatter came
later, and so did Pants' rule for it (2.20's `ruff/fmt_rules.py`). This rule is that one
missing piece, on Pants' own `[ruff]` subsystem: the same tool PEX, version, resolve and
config discovery as the linter, so one pinned ruff lints and formats."""

from __future__ import annotations

from pants.backend.python.lint.ruff.subsystem import Ruff, RuffFieldSet
from pants.backend.python.util_rules.pex import PexRequest, VenvPex, VenvPexProcess
from pants.core.goals.fmt import FmtResult, FmtTargetsRequest
from pants.core.util_rules.config_files import ConfigFiles, ConfigFilesRequest
from pants.core.util_rules.partitions import PartitionerType
from pants.engine.fs import Digest, MergeDigests
from pants.engine.process import ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel
from pants.util.meta import classproperty
from pants.util.strutil import pluralize


class RuffFormatRequest(FmtTargetsRequest):
    field_set_type = RuffFieldSet
    # Pants' own ruff requests set the same; its annotation (a protocol of Pants' SkipOption)
    # does not accept Pants' own subsystems under this mypy.
    tool_subsystem = Ruff  # type: ignore[assignment]
    partitioner_type = PartitionerType.DEFAULT_SINGLE_PARTITION

    @classproperty
    def tool_name(cls) -> str:
        return "ruff format"

    # Apart from the linter's "ruff", so `--fmt-only=ruff-format` and `--lint-only` tell them apart.
    @classproperty
    def tool_id(cls) -> str:
        return "ruff-format"


@rule(desc="Format with `ruff format`", level=LogLevel.DEBUG)
async def ruff_format(request: RuffFormatRequest.Batch, ruff: Ruff) -> FmtResult:
    ruff_pex, config_files = await MultiGet(
        Get(VenvPex, PexRequest, ruff.to_pex_request()),
        Get(ConfigFiles, ConfigFilesRequest, ruff.config_request(request.snapshot.dirs)),
    )
    input_digest = await Get(Digest, MergeDigests((request.snapshot.digest, config_files.snapshot.digest)))
    # `[ruff].args` are the linter's (e.g. `--select`), which `ruff format` would refuse.
    result = await Get(
        ProcessResult,
        VenvPexProcess(
            ruff_pex,
            argv=("format", *((f"--config={ruff.config}",) if ruff.config else ()), *request.files),
            input_digest=input_digest,
            output_files=request.files,
            description=f"Run ruff format on {pluralize(len(request.files), 'file')}.",
            level=LogLevel.DEBUG,
        ),
    )
    return await FmtResult.create(request, result, strip_chroot_path=True)


def rules():
    return [*collect_rules(), *RuffFormatRequest.rules()]
