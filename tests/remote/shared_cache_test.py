"""Two CI machines share one remote cache, and a pull-request job cannot write into it.

A real BuildGrid (`remote/bgd server start remote/buildgrid.yml`) on a free loopback
port, and real nested `./pants` runs in git clones of a repository built from the
project's files, each clone a machine with its own local store, named caches and pantsd:
machine A and machine B run protected-branch jobs (read and write, with the protected
instance's token), machine P a pull-request job (the read-only instance, no token, and
`--remote-cache-write` on: the server must refuse it). Hit counts come from Pants'
`--stats-log` counters. docs/scale-out.md is the recipe this follows.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from support.git_repo import GitRepo
from support.tools import missing

SOURCE = Path.cwd()  # the sandbox: //:project-files and remote:server
BGD = SOURCE / "remote/bgd"
CONFIG = SOURCE / "remote/buildgrid.yml"
TARGET = "examples/orders:properties"
IMPL = "examples/orders/src/orders_app/pricing.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
FREEZE = ".witness-gate/freezes/unrelated.json"  # [witness-gate].freezes_dir's default
# What the nested repository needs of the project to run `pants test` on the orders example.
PROJECT = ("pants", "pants.toml", "BUILD", "pyproject.toml", "3rdparty", "runner", "rules", "schemas", "examples")
SERVER_START_TIMEOUT = 180


@dataclass
class Run:
    code: int
    output: str
    counters: dict[str, int]
    seconds: float


def counters(output: str) -> dict[str, int]:
    """The `--stats-log` counters Pants prints after `Counters:`."""
    _, marker, rest = output.partition("Counters:\n")
    assert marker, f"no counters in the output (is --stats-log on?):\n{output[-3000:]}"
    return {name: int(value) for name, value in re.findall(r"^  (\w+): (\d+)$", rest, re.M)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def hs256_token(secret: bytes, subject: str) -> bytes:
    """A JWT for the protected instance, signed as remote/buildgrid.yml's secret requires."""

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    claims = {"sub": subject, "exp": int(time.time()) + 3600}
    signing = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + b"." + b64(json.dumps(claims).encode())
    return signing + b"." + b64(hmac.new(secret, signing, hashlib.sha256).digest())


@dataclass
class Server:
    address: str
    token: Path
    env: dict[str, str]

    def bgd(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(BGD), *args], env=self.env, capture_output=True, text=True, timeout=120)

    def action_cache(self, instance: str, *args: str, token: bool = False) -> subprocess.CompletedProcess:
        auth = ("--auth-token", str(self.token)) if token else ()
        return self.bgd("actioncache", "--remote", f"http://{self.address}", "--instance-name", instance, *auth, *args)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    work = tmp_path_factory.mktemp("buildgrid")
    secret, token = work / "secret", work / "protected.token"
    secret.write_bytes(base64.b64encode(os.urandom(32)))
    token.write_bytes(hs256_token(secret.read_bytes().strip(), "protected-ci"))
    port = free_port()
    env = {
        **os.environ,
        "WITNESS_GATE_CACHE_PORT": str(port),
        "WITNESS_GATE_CACHE_DIR": str(work / "data"),
        "WITNESS_GATE_CACHE_SECRET": str(secret),
    }
    # Installs BuildGrid into its cached venv (once per machine) and checks the config.
    linted = subprocess.run(
        [str(BGD), "server", "lint", str(CONFIG)], env=env, capture_output=True, text=True, timeout=900
    )
    if linted.returncode == 3:  # CPython 3.13 absent: a skip on a developer's machine, a failure in CI
        missing(linted.stderr.strip())
    assert linted.returncode == 0, linted.stdout + linted.stderr
    log_path = work / "server.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(BGD), "server", "start", str(CONFIG)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        while True:
            assert process.poll() is None, f"bgd server exited with {process.returncode}:\n{log_path.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() - started < SERVER_START_TIMEOUT, (
                    f"bgd server not listening on 127.0.0.1:{port} after {SERVER_START_TIMEOUT} "
                    f"s:\n{log_path.read_text()}"
                )
                time.sleep(0.5)
        print(f"BuildGrid listening after {time.monotonic() - started:.1f} s")
        yield Server(f"127.0.0.1:{port}", token, env)
    finally:
        # Its own process group: the launcher execs bgd, and anything bgd started goes too.
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Machine(GitRepo):
    """A CI machine: a clone with its own local store, named caches and pantsd."""

    def __init__(self, root: Path, options: list[str]) -> None:
        super().__init__(root)
        self.options = options
        self.env = {**os.environ, "PANTS_LOCAL_STORE_DIR": str(root.parent / f"{root.name}-store")}
        self.named_caches = root.parent / f"{root.name}-named-caches"

    def pants_test(self) -> Run:
        started = time.monotonic()
        done = subprocess.run(
            [
                "./pants",
                "--no-dynamic-ui",
                f"--named-caches-dir={self.named_caches}",
                "--stats-log",
                *self.options,
                "test",
                "--test-output=failed",
                TARGET,
            ],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        output = done.stdout + done.stderr
        run = Run(done.returncode, output, counters(output), time.monotonic() - started)
        print(
            f"{self.root.name}: exit {run.code} in {run.seconds:.0f} s, remote cache "
            f"{run.counters.get('remote_cache_requests_cached')}"
            f"/{run.counters.get('remote_cache_requests')} hit, {run.counters.get('remote_cache_write_successes')} "
            "written"
        )
        return run


def served_remotely(run: Run) -> bool:
    return re.search(rf"^. {re.escape(TARGET)} .*\(cached remotely\)", run.output, re.M) is not None


@pytest.fixture(scope="module")
def machines(server, tmp_path_factory):
    work = tmp_path_factory.mktemp("ci")
    origin = GitRepo(work / "origin")
    origin.root.mkdir()
    for name in PROJECT:
        (shutil.copytree if (SOURCE / name).is_dir() else shutil.copy2)(SOURCE / name, origin.root / name)
    (origin.root / ".gitignore").write_text("/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n__pycache__/\n")
    origin.git("init", "-q", "-b", "main")
    origin.commit("the protected branch")
    store = f"--remote-store-address=grpc://{server.address}"
    protected = [
        "--remote-cache-read",
        "--remote-cache-write",
        store,
        "--remote-instance-name=protected",
        f"--remote-oauth-bearer-token-path={server.token}",
    ]
    # The pull-request job as misconfigured as it can be: it asks to write, without the token.
    pull_request = ["--remote-cache-read", "--remote-cache-write", store, "--remote-instance-name=pull-request"]
    found = {}
    for name, options in (("a", protected), ("b", protected), ("p", pull_request)):
        subprocess.run(["git", "clone", "-q", str(origin.root), str(work / name)], check=True)
        found[name] = Machine(work / name, options)
    yield found
    for machine in found.values():
        machine.stop_pantsd()


def test_a_second_machine_is_served_every_green_gated_target_from_the_remote_cache(machines):
    a, b = machines["a"], machines["b"]
    cold = a.pants_test()
    assert cold.code == 0, cold.output
    assert (
        cold.counters["remote_cache_write_successes"] >= 1 and cold.counters["remote_cache_write_errors"] == 0
    ), cold.counters
    warm = b.pants_test()
    assert warm.code == 0, warm.output
    assert served_remotely(warm), warm.output
    hits = warm.counters
    assert hits["remote_cache_requests_cached"] == hits["remote_cache_requests"] >= 1, hits
    assert hits["remote_cache_requests_uncached"] == 0 and hits["remote_cache_read_errors"] == 0, hits
    print(f"orders example: cold on A {cold.seconds:.0f} s, warm from the remote cache on B {warm.seconds:.0f} s")


def test_a_pull_request_job_reads_the_protected_results_but_cannot_write(machines):
    p, b = machines["p"], machines["b"]
    # An implementation edit: a process no machine ran yet, which P would write if it could.
    for machine in (p, b):
        machine.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, line by line."""')
    pr = p.pants_test()
    assert pr.code == 0, pr.output
    assert pr.counters["remote_cache_requests_cached"] >= 1, pr.counters  # the read-only view reads what A wrote
    assert (
        pr.counters["remote_cache_write_attempts"] >= 1 and pr.counters["remote_cache_write_successes"] == 0
    ), pr.counters
    assert pr.counters["remote_cache_write_errors"] == pr.counters["remote_cache_write_attempts"], pr.counters
    assert "read-only" in pr.output or "not allowed" in pr.output, pr.output
    # The protected machine running the same edit finds nothing: the PR's result was never stored.
    protected = b.pants_test()
    assert protected.code == 0, protected.output
    assert not served_remotely(protected), protected.output
    assert protected.counters["remote_cache_requests_uncached"] >= 1, protected.counters


def test_the_server_refuses_a_result_written_by_a_client_without_the_protected_token(server):
    # The code under test can speak REAPI itself: what it could send, straight to the server.
    result = hashlib.sha256(b"a forged pass").hexdigest() + "/13"
    forged, honest = hashlib.sha256(b"action P").hexdigest() + "/8", hashlib.sha256(b"action A").hexdigest() + "/8"
    for instance, token in (("pull-request", False), ("protected", False)):
        refused = server.action_cache(instance, "update", forged, result, token=token)
        assert refused.returncode != 0 and (
            "not allowed" in refused.stderr + refused.stdout or "UNAUTHENTICATED" in refused.stderr + refused.stdout
        ), (instance, refused.stdout, refused.stderr)
    missed = server.action_cache("protected", "get", forged, token=True)
    assert "Miss:" in missed.stdout + missed.stderr, (missed.stdout, missed.stderr)
    # The control: the protected writer's result is stored, and the read-only view serves it.
    stored = server.action_cache("protected", "update", honest, result, token=True)
    assert stored.returncode == 0, (stored.stdout, stored.stderr)
    seen = server.action_cache("pull-request", "get", honest)
    assert "Hit:" in seen.stdout + seen.stderr, (seen.stdout, seen.stderr)
    unauthenticated = server.action_cache("protected", "get", honest)
    assert (
        "Hit:" not in unauthenticated.stdout + unauthenticated.stderr
    ), unauthenticated.stdout  # no token: no reads either


def test_a_failing_target_is_never_served_as_a_pass(machines):
    a, b = machines["a"], machines["b"]
    for machine in (a, b):
        machine.git("checkout", "-q", "-f", "main")
        machine.edit(IMPL, *BUG)
    red_a = a.pants_test()
    assert red_a.code == 1 and "regression: prop_order_total_non_negative" in red_a.output, red_a.output
    red_b = b.pants_test()
    assert red_b.code == 1 and "regression: prop_order_total_non_negative" in red_b.output, red_b.output
    assert not served_remotely(red_b) and red_b.counters["remote_cache_requests_uncached"] >= 1, red_b.counters


def test_a_verdict_that_can_rest_on_a_freeze_is_never_served_from_the_remote_cache(machines):
    # The plugin runs gated targets uncached while any freeze exists: a freeze expires
    # with the clock, which no cache key holds. A well-formed freeze that covers nothing
    # keeps this run green, so a cache hit would be the only way to skip the run.
    a, b = machines["a"], machines["b"]
    now = datetime.now(timezone.utc)
    freeze = {
        "schema_version": 1,
        "assertion_id": "prop_unrelated",
        "fixture_digest": "0" * 64,
        "witness_hash": "0" * 64,
        "failures": 1,
        "runs": 5,
        "created_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expires_at": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    for machine in (a, b):
        machine.git("checkout", "-q", "-f", "main")
        (machine.root / FREEZE).parent.mkdir(parents=True, exist_ok=True)
        (machine.root / FREEZE).write_text(json.dumps(freeze))
        machine.commit("a freeze")
    frozen_a = a.pants_test()
    assert frozen_a.code == 0, frozen_a.output
    frozen_b = b.pants_test()
    assert frozen_b.code == 0, frozen_b.output
    assert not served_remotely(frozen_b), frozen_b.output
    assert frozen_b.counters["local_execution_requests"] >= 1, frozen_b.counters  # B ran it itself
    assert "examples/orders:properties succeeded" in frozen_b.output, frozen_b.output
