#!/usr/bin/env python3
"""Writes the runner pins of docs/ci/review-job.sh: the runner wheel and its whole
dependency closure, each pinned by sha256, for `pip install --require-hashes --only-binary
:all: --no-deps`.

The closure is the wheel's own `Requires-Dist`, followed through the project's lockfile
(3rdparty/python/default.lock, the versions every test runs) for the job's interpreter,
CPython 3.11 on Linux; each locked version brings the hashes of all its wheels (no sdist:
nothing is built), the runner the hash of the wheel given. Build that wheel with
`./pants package runner:dist` (pants.toml sets SOURCE_DATE_EPOCH, so the same sources give
the same bytes on any machine), then:

    python3.11 docs/ci/pin_runner.py dist/witness_gate-0.4.0-py3-none-any.whl           # rewrites the block
    python3.11 docs/ci/pin_runner.py dist/witness_gate-0.4.0-py3-none-any.whl --check   # exit 1 when stale

Uses `packaging` where it is installed, else the copy inside pip.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a bare interpreter: pip carries the same library
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "3rdparty/python/default.lock"
JOB = ROOT / "docs/ci/review-job.sh"
BEGIN = "cat >\"$work/runner-requirements.txt\" <<'PINS'\n"
END = "PINS\n"
# The interpreter review-job.sh installs into: python3.11 on a Linux CI machine.
ENVIRONMENT = {
    "python_version": "3.11",
    "python_full_version": "3.11.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "extra": "",
}


def wheel_requirements(wheel: Path) -> tuple[str, str, list[str]]:
    """The wheel's name, version and Requires-Dist, from its METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", name)]
        message = email.parser.Parser().parsestr(archive.read(metadata).decode())
    return message["Name"], message["Version"], message.get_all("Requires-Dist") or []


def locked(lock: Path) -> dict[str, dict]:
    """The lock's one resolve, by canonical project name (its `//` header is not JSON)."""
    text = "\n".join(line for line in lock.read_text().splitlines() if not line.startswith("//"))
    [resolve] = json.loads(text)["locked_resolves"]
    return {canonicalize_name(entry["project_name"]): entry for entry in resolve["locked_requirements"]}


def applies(requirement: Requirement) -> bool:
    return requirement.marker is None or requirement.marker.evaluate(ENVIRONMENT)


def closure(roots: list[str], lock: dict[str, dict]) -> list[dict]:
    """The locked entries `roots` need, transitively, on the job's interpreter (no extras)."""
    seen: dict[str, dict] = {}
    pending = [Requirement(spec) for spec in roots]
    while pending:
        requirement = pending.pop()
        if not applies(requirement):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        if name not in lock:
            raise SystemExit(f"pin_runner: {requirement} is not in {LOCK.relative_to(ROOT)}: lock the resolve again")
        entry = lock[name]
        if not requirement.specifier.contains(entry["version"], prereleases=True):
            raise SystemExit(f"pin_runner: the lock has {name} {entry['version']}, outside {requirement}")
        seen[name] = entry
        pending.extend(Requirement(spec) for spec in entry["requires_dists"])
    return [seen[name] for name in sorted(seen)]


def requirement_lines(name: str, version: str, hashes: list[str]) -> str:
    return (
        " \\\n".join([f"{name}=={version}", *(f"    --hash=sha256:{digest}" for digest in sorted(set(hashes)))]) + "\n"
    )


def pins(wheel: Path, lock_path: Path = LOCK) -> str:
    """The requirements file: the runner wheel's hash, then its closure's wheel hashes."""
    name, version, requires = wheel_requirements(wheel)
    lines = [requirement_lines(canonicalize_name(name), version, [hashlib.sha256(wheel.read_bytes()).hexdigest()])]
    for entry in closure(requires, locked(lock_path)):
        wheels = [a["hash"] for a in entry["artifacts"] if a["algorithm"] == "sha256" and a["url"].endswith(".whl")]
        if not wheels:
            raise SystemExit(
                f"pin_runner: {entry['project_name']} {entry['version']} has no wheel in the lock; the job installs "
                "binaries only"
            )
        lines.append(requirement_lines(canonicalize_name(entry["project_name"]), entry["version"], wheels))
    return "".join(lines)


def shipped(job_text: str) -> str:
    """The pins block of the job as it stands."""
    [block] = re.findall(re.escape(BEGIN) + r"(.*?)^" + re.escape(END), job_text, re.S | re.M)
    return block


def with_pins(job_text: str, block: str) -> str:
    return job_text.replace(BEGIN + shipped(job_text), BEGIN + block, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="the runner wheel: ./pants package runner:dist")
    parser.add_argument("--lock", type=Path, default=LOCK)
    parser.add_argument("--job", type=Path, default=JOB)
    parser.add_argument("--check", action="store_true", help="exit 1 when the job's pins differ from these")
    args = parser.parse_args()
    text = args.job.read_text()
    block = pins(args.wheel, args.lock)
    if args.check:
        if shipped(text) != block:
            print(
                f"pin_runner: the pins in {args.job} are stale: run python3.11 docs/ci/pin_runner.py {args.wheel}",
                file=sys.stderr,
            )
            return 1
        return 0
    args.job.write_text(with_pins(text, block))
    return 0


if __name__ == "__main__":
    sys.exit(main())
