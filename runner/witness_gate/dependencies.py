"""The third-party packages the code under test needs, as the base declares them.

The workers have the runner's own packages and nothing else: a project's dependencies come
from a requirements file of the base (`requirements` in `[tool.witness-gate]`), every line
pinned by hash (`pip install --require-hashes`), or, where a build graph declares the
suites, from its resolve's lockfile: the projects the suites' closures require and what
they require in turn, each with every artifact hash the lockfile records
(`pinned_from_lock`). Only wheels (`--only-binary :all:`: installing runs no code of
theirs). The trusted side installs them, outside the sandbox, with the interpreter the
runner's own comes from, into a directory of the review's; each worker sees it read-only
at `INSIDE`, the first entry of its import path (a module the head adds under the tree's
import paths cannot shadow a package the base declares). A head that edits the file edits
a gate control (an oracle edit), so what it declares is always the base's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from witness_gate.errors import WitnessGateError

INSIDE = "/run/witness-gate/dependencies"
_PIP_SECONDS = 900
_PROJECT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def project_key(name: str) -> str:
    """A project's name as PEP 503 normalizes it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def required_project(requirement: str) -> str | None:
    """The project a requirement (`name[extra]>=1; marker`) names, normalized."""
    found = _PROJECT.match(requirement)
    return project_key(found.group()) if found else None


def pinned_from_lock(lock: bytes, projects: tuple[str, ...], where: str) -> bytes:
    """A requirements file pinning `projects` and everything they require, as the Pants
    lockfile `lock` (pex's lock format, after its `//` header) records them: one
    `name==version` line per project with every artifact hash it lists (pip picks this
    interpreter's wheel), and a `--find-links` for each local artifact's directory. Pure."""
    try:
        body = json.loads("\n".join(line for line in lock.decode().splitlines() if not line.startswith("//")))
        locked = [entry for resolve in body["locked_resolves"] for entry in resolve["locked_requirements"]]
        by_name: dict[str, list[dict[str, Any]]] = {}
        for entry in locked:
            by_name.setdefault(project_key(entry["project_name"]), []).append(entry)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise WitnessGateError(f"{where}: not a Pants lockfile ({type(error).__name__}: {error})") from None
    wanted, pending = set(), [project_key(project) for project in projects]
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in by_name:
            raise WitnessGateError(
                f"{where}: the suites require {name}, which the lockfile does not pin: regenerate it"
            )
        wanted.add(name)
        for requirement in (dist for entry in by_name[name] for dist in entry.get("requires_dists", [])):
            required = required_project(requirement)
            if required in by_name:  # one this resolve needed (an unused extra is absent)
                pending.append(required)
    lines, links = [], set()
    for name in sorted(wanted):
        versions = {entry["version"] for entry in by_name[name]}
        if len(versions) != 1:
            raise WitnessGateError(
                f"{where}: {name} is locked at {', '.join(sorted(versions))}: one version per project is installable"
            )
        artifacts = [artifact for entry in by_name[name] for artifact in entry["artifacts"]]
        hashes = sorted({f"--hash={artifact['algorithm']}:{artifact['hash']}" for artifact in artifacts})
        links |= {artifact["url"].rsplit("/", 1)[0] for artifact in artifacts if artifact["url"].startswith("file:")}
        lines.append(f"{name}=={versions.pop()} {' '.join(hashes)}")
    return "".join(f"{line}\n" for line in [*(f"--find-links {link}" for link in sorted(links)), *lines]).encode()


def install(requirements: bytes, where: str, target: Path) -> None:
    """Installs the packages `requirements` (the bytes of the base's file `where`) pins into
    `target`, readable by every user (a root runner's workers read it as `nobody`); refuses
    (exit 2) when pip cannot: a setup failure, never a verdict on the patch."""
    target.mkdir(parents=True)
    listing = target.parent / "requirements.txt"
    listing.write_bytes(requirements)
    python = getattr(sys, "_base_executable", None) or sys.executable  # a venv's (a PEX's) base interpreter has pip
    # -I, and a directory of the review's own as the working directory: `-m pip` would
    # otherwise import a `pip` package from the CI checkout (the head's files), as root.
    argv = [
        python,
        "-I",
        "-m",
        "pip",
        "install",
        "--require-hashes",
        "--only-binary",
        ":all:",
        "--no-deps",
        "--no-compile",
        "--disable-pip-version-check",
        "--no-input",
        "--target",
        str(target),
        "-r",
        str(listing),
    ]
    try:
        done = subprocess.run(
            argv,
            cwd=target.parent,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_PIP_SECONDS,
            env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WitnessGateError(f"setup failed: installing the base's {where}: {error}") from None
    if done.returncode != 0:
        said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise WitnessGateError(
            f"setup failed: pip could not install the base's {where} (every line pinned by hash, wheels only): "
            f"{said[-1] if said else f'exit status {done.returncode}'}"
        )
    for directory, _, files in os.walk(target):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
