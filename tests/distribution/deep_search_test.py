"""docs/ci/deep-search.yml installs the runner as the pull-request job does: the job's own
pins (its copy at .ci/witness-gate-review.sh), by sha256, binaries only, from the index the
team names; never a bare name from a public index."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs/ci/deep-search.yml"
JOB = ROOT / "docs/ci/review-job.sh"


def pin_runner():
    spec = importlib.util.spec_from_file_location("pin_runner", ROOT / "docs/ci/pin_runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_nightly_search_installs_exactly_the_jobs_pins_by_hash(tmp_path: Path):
    text = WORKFLOW.read_text()
    [extract] = [line.strip() for line in text.splitlines() if line.strip().startswith("sed -n ")]
    (tmp_path / ".ci").mkdir()
    shutil.copy2(JOB, tmp_path / ".ci/witness-gate-review.sh")
    done = subprocess.run(
        ["bash", "-c", extract],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    assert (tmp_path / "runner-requirements.txt").read_text() == pin_runner().shipped(JOB.read_text())
    [install] = re.findall(r'"\$RUNNER_TEMP/runner/bin/pip" install [^\n]*\\\n[^\n]*', text)
    for needed in (
        "--require-hashes",
        "--only-binary :all:",
        "--no-deps",
        '--index-url "$WITNESS_GATE_INDEX_URL"',
        '-r "$RUNNER_TEMP/runner-requirements.txt"',
    ):
        assert needed in install, needed
    assert not re.search(r"pip install[^\n]*witness-gate==", text), "a bare name from a public index"
