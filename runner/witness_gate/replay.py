"""Replays (spec section 3): the same payload, N times, each from a clean state.

One fresh interpreter per property module imports that module and nothing else of
the user's; each replay is a fork of it, so state one replay leaves (globals,
caches, the `random` stream, which Python reseeds in a forked child) cannot hide
instability in the next. The property is called directly, never through
Hypothesis, which reseeds `random` to 0 and so hides flakes. A replay that hangs
is killed at the timeout and counts as a failure; so does one that crashes.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate.errors import WitnessGateError

_WORKER_BOOT = "import sys, json; sys.path[:] = json.loads(sys.stdin.readline()); from witness_gate.replay import _worker_main; _worker_main()"


@dataclass(frozen=True)
class ReplayJob:
    assertion_id: str
    payload: Any
    count: int
    expect: str  # "accept", or "reject" for a payload the property must refuse


@dataclass(frozen=True)
class ReplayResult:
    failures: int
    runs: int
    missing: bool  # the module no longer defines this property
    evidence: dict[str, Any] | None  # of the first failing replay


def replay_module(
    module_path: str,
    jobs: list[ReplayJob],
    root: Path,
    import_paths: tuple[str, ...],
    fixture_path: Path,
    timeout: float,
) -> list[ReplayResult]:
    """Runs every job for one property module in one fresh worker interpreter."""
    request = {
        "root": str(root.absolute()),
        "import_paths": list(import_paths),
        "module_path": module_path,
        "fixture_path": str(fixture_path.absolute()),
        "timeout": timeout,
        "jobs": [{"assertion_id": j.assertion_id, "payload": j.payload, "count": j.count, "expect": j.expect} for j in jobs],
    }
    # -I: no user site, no PYTHON* variables; -S: no site-packages but the ones the
    # parent itself runs with, passed explicitly as sys.path.
    process = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _WORKER_BOOT],
        input=(json.dumps([os.path.abspath(entry) for entry in sys.path]) + "\n" + json.dumps(request) + "\n").encode(),
        capture_output=True,
        cwd=root,
        check=False,
    )
    try:
        answer = json.loads(process.stdout.decode("utf-8").strip().splitlines()[-1])
    except (IndexError, ValueError, UnicodeDecodeError):
        tail = process.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise WitnessGateError(f"{module_path}: replay worker failed (exit {process.returncode}): {tail[0][:300]}") from None
    if "error" in answer:
        raise WitnessGateError(answer["error"])
    return [ReplayResult(r["failures"], r["runs"], r["missing"], r["evidence"]) for r in answer["results"]]


# --- worker side: runs in the fresh interpreter -------------------------------------


def _worker_main() -> None:
    request = json.loads(sys.stdin.readline())
    protocol = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # whatever the user's module prints must not corrupt the protocol
    from witness_gate.errors import WitnessGateError as Refusal
    from witness_gate.properties import add_import_paths, find, import_module

    try:
        root = Path(request["root"])
        add_import_paths(root, request["import_paths"])
        module, digest = import_module(root / request["module_path"], request["module_path"])
        fixture = None
        results = []
        for job in request["jobs"]:
            prop = find(module, request["module_path"], digest, job["assertion_id"])
            if prop is None:
                results.append({"failures": 0, "runs": 0, "missing": True, "evidence": None})
                continue
            if prop.spec.takes_fixture and fixture is None:
                fixture = _load_fixture(Path(request["fixture_path"]))
            payload_text = json.dumps(job["payload"])
            failures, evidence = 0, None
            for _ in range(job["count"]):
                outcome = _replay_once(prop, payload_text, fixture, job["expect"], request["timeout"])
                if outcome is not None:
                    failures += 1
                    evidence = evidence or outcome
            results.append({"failures": failures, "runs": job["count"], "missing": False, "evidence": evidence})
        answer: dict[str, Any] = {"results": results}
    except Refusal as error:
        answer = {"error": str(error)}
    protocol.write(json.dumps(answer) + "\n")
    protocol.flush()


def _load_fixture(path: Path) -> Any:
    from witness_gate.canonical import parse_json
    from witness_gate.store import read_regular_file

    return parse_json(read_regular_file(path, "fixture"), str(path))


def _replay_once(prop: Any, payload_text: str, fixture: Any, expect: str, timeout: float) -> dict[str, Any] | None:
    """Evidence of failure, or None when the forked replay passed."""
    from witness_gate.properties import evaluate, failure_evidence

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one call, then report and leave without cleanup handlers
        os.close(read_end)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        status = 0
        try:
            outcome = evaluate(prop, json.loads(payload_text), fixture, expect)
            message = json.dumps({"passed": outcome.passed, "evidence": outcome.evidence}).encode()
            os.write(write_end, message)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_end], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return failure_evidence("timeout", None, f"replay did not finish within {timeout:g} s")
    try:
        result = json.loads(b"".join(chunks))
    except ValueError:
        return failure_evidence("crashed", None, f"replay process ended without a result (wait status {status})")
    return None if result["passed"] else result["evidence"]
