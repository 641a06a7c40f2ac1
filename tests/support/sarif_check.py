"""Microsoft's SARIF Multitool as the consumer of the SARIF logs the tests write: the SARIF
2.1.0 schema and the specification's own rules (`Sarif.Multitool validate`), pinned by
tests/validators/sarif/package-lock.json and installed from npm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "validators" / "sarif"
_BINARY = "node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"


def install(work: Path) -> Path:
    """The multitool binary, installed into `work` from the lockfile."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed for the SARIF Multitool (on PATH); .ci/run runs where it is")
    shutil.copytree(PACKAGE, work, ignore=shutil.ignore_patterns("node_modules"))
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=work, capture_output=True, text=True, env=os.environ
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    binary = work / _BINARY
    binary.chmod(0o755)  # its install script would do this; npm no longer runs install scripts unasked
    return binary


def problems(tool: Path, log: Path) -> list[str]:
    """Every error and warning the multitool reports for one SARIF log (it exits 0 either way)."""
    out = log.with_name(log.name + ".validation.sarif")
    done = subprocess.run(
        [str(tool), "validate", str(log), "--output", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and out.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(out.read_text("utf-8-sig"))["runs"][0].get("results", [])
    return [
        f"{r.get('level', 'warning')} {r['ruleId']}: {r['message'].get('text') or r['message'].get('arguments')}"
        for r in results
        if r.get("level", "warning") in ("error", "warning")
    ]
