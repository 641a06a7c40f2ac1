"""The runner's own code, checked against the PEX it was built as before `review` decides.

A PEX in venv mode runs from a copy it installs under `$PEX_ROOT` on its first start, and
every later start on that machine runs that copy. Anything that wrote into it since (a
previous job's code running as the same user outside a sandbox, a `pants test` of some
other branch) would decide this job's verdicts. So `review`, started from a PEX, compares
each Python module and schema of the installed copy with the bytes inside the PEX file
itself and refuses to run when one differs or is missing. A runner installed by pip is
taken as installed: install it in the job, from a pinned version, where no patch ran.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

from witness_gate.errors import WitnessGateError

# The PEX's own bootstrap code and metadata are not installed into the venv as they are.
_NOT_INSTALLED = (".bootstrap/", "__pex__/", "PEX-INFO", "__main__.py")
_CHECKED_SUFFIXES = (".py", ".json")


def installed_path(member: str) -> str | None:
    """Where a PEX member is installed relative to site-packages, or None when the venv
    holds no plain copy of it (pure): `.deps/<wheel>/<path>` is the wheel's file at
    `<path>`; first-party code sits at its own path."""
    if member.endswith("/") or member.startswith(_NOT_INSTALLED) or not member.endswith(_CHECKED_SUFFIXES):
        return None
    if member.startswith(".deps/"):
        path = member.split("/", 2)[2]
        # pex's own records of the wheel (.layout.json) and install-time data are not copied as is
        return None if path.startswith(".") or ".data/" in path else path
    return member


def differences(pex: Path, site_packages: Path) -> list[str]:
    """The installed paths whose bytes differ from the PEX's, or that are missing."""
    found = []
    with zipfile.ZipFile(pex) as archive:
        for member in archive.namelist():
            relative = installed_path(member)
            if relative is None:
                continue
            try:
                installed = (site_packages / relative).read_bytes()
            except OSError:
                found.append(f"{relative} (missing)")
                continue
            if hashlib.sha256(installed).digest() != hashlib.sha256(archive.read(member)).digest():
                found.append(relative)
    return found


def verify_own_code() -> None:
    """Refuses (exit 2) when the runner runs from a PEX whose installed copy was changed."""
    pex = os.environ.get("PEX")  # the PEX bootstrap names the file it started from
    if not pex:
        return
    site_packages = Path(__file__).resolve().parents[1]
    try:
        changed = differences(Path(pex), site_packages)
    except (OSError, zipfile.BadZipFile) as error:
        raise WitnessGateError(f"{pex}: cannot read the runner's own PEX to check its installed copy: {error}") from None
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise WitnessGateError(
            f"the runner's installed copy under {site_packages} differs from {pex}: {shown}; something wrote into it "
            "since it was installed. Start the job with a fresh PEX_ROOT (docs/adopt.md, the CI job)"
        )
