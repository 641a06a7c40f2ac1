"""The runner's own code, checked against the PEX it was built as before `review` decides.

A PEX runs from a copy it extracts under `$PEX_ROOT` on its first start (a venv, or wheel
and code chroots), and every later start on that machine runs that copy. Anything that
wrote into it since (a previous job's code running as the same user outside a sandbox, a
`pants test` of some other branch) would decide this job's verdicts. So `review`,
started from a PEX, finds each Python module and schema of the PEX where this
interpreter imports it from (the first entry of `sys.path` that has it, as import does),
compares it with the bytes inside the PEX file itself, and refuses to run when one
differs or is missing. A runner installed by pip is taken as installed: install it in
the job, from a pinned version, where no patch ran.
"""

from __future__ import annotations

import hashlib
import os
import sys
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


def differences(pex: Path, search_path: list[Path]) -> list[str]:
    """The PEX's files whose first copy on `search_path` differs from the PEX's bytes, or
    that no entry holds."""
    found = []
    directories = [entry for entry in search_path if entry.is_dir()]
    with zipfile.ZipFile(pex) as archive:
        for member in archive.namelist():
            relative = installed_path(member)
            if relative is None:
                continue
            installed = next((entry / relative for entry in directories if (entry / relative).is_file()), None)
            if installed is None:
                found.append(f"{relative} (missing)")
            elif hashlib.sha256(installed.read_bytes()).digest() != hashlib.sha256(archive.read(member)).digest():
                found.append(str(installed))
    return found


def verify_own_code() -> None:
    """Refuses (exit 2) when the runner runs from a PEX whose installed copy was changed."""
    pex = os.environ.get("PEX")  # the PEX bootstrap names the file it started from
    if not pex:
        return
    try:
        changed = differences(Path(pex), [Path(entry or ".") for entry in sys.path])
    except (OSError, zipfile.BadZipFile) as error:
        raise WitnessGateError(
            f"{pex}: cannot read the runner's own PEX to check its installed copy: {error}"
        ) from None
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise WitnessGateError(
            f"the runner's installed copy differs from {pex}: {shown}; something wrote into it since it was installed. "
            "Start the job with a fresh PEX_ROOT (docs/adopt.md, the CI job)"
        )
