"""A real project's own Hypothesis tests, unchanged, gate a real bug of its history: hpack 4.2.0.

hpack (python-hyper's HTTP/2 header compression, pure Python, no dependencies) ships its
test suite in its sdist. Its `tests/test_encode_decode.py` holds, among plain tests, six
`@given` tests of the HPACK integer codec; one of them,
`TestEncodingProperties::test_decode_either_succeeds_or_raises_error`, states the codec's
contract: decoding any bytes "either returns a positive integer or throws a
HPACKDecodingError". A repository here holds hpack 4.2.0's package (`src/hpack/`, from the
sdist on PyPI, checked by its sha256) and, as the oracle, that test module and the
`conftest.py` beside it in the sdist, both byte for byte (`tests/properties/`); nothing in
them knows about witness-gate, so the gate runs them under pytest.

The bug is real: before hpack 2.1.0, `decode_integer` let an `IndexError` escape on an
integer whose bytes run out (an empty header block, a cut continuation byte). The 2.1.0
entry of hpack's CHANGELOG.rst (in the same sdist) says "Instead of throwing
``IndexError`` when encountering invalid encoded integers HPACK now throws
``HPACKDecodingError``"; the fix is python-hyper/hpack commit 862a026 ("Don't throw
IndexError, throw HPACKDecodingError", 2016-02-01), which wrapped the decoding loop in
`try: ... except IndexError: raise HPACKDecodingError(...)`. A pull request that undoes
that fix on 4.2.0's `decode_integer` (the loop, unwrapped) is a `regression` under
`review`, found by the default search; its witness is the choice sequence Hypothesis
saved for the shrunk failure (`data=b''`), a second search writes it again byte for byte,
and Hypothesis itself, handed that sequence alone, re-runs the same input and fails the
same way on the pull request's code and passes on 4.2.0's. An honest refactor of the same
function passes.

No flake here: hpack draws no randomness, reads no clock, and the only order that varies
between interpreters (set iteration in its `test_hpack.py`) is pinned by the gate's hash
secret, so this test has no nondeterministic case to show.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

from support.git_repo import GitRepo
from support.released import sdist as released_sdist, cli, gated_repo, review, runner_env, suite_pyproject
from witness_gate import witness

PROJECT, VERSION = "hpack", "4.2.0"
SDIST_SHA256 = "0895cfa3b5531fc65fe439c05eb65144f123bf7a394fcaa56aa423548d8e45c0"  # hpack-4.2.0.tar.gz on PyPI
# The project's own files, unchanged: sdist path -> repository path.
ORACLE = {"tests/test_encode_decode.py": "tests/properties/test_encode_decode.py", "tests/conftest.py": "tests/properties/conftest.py"}
IMPL = "src/hpack/hpack.py"
NODE = "tests/properties/test_encode_decode.py::TestEncodingProperties::test_decode_either_succeeds_or_raises_error"
BUG_BRANCH, HONEST_BRANCH = "indexerror-again", "mask-refactor"
PYPROJECT = suite_pyproject("hpack")


def released(work: Path) -> dict[str, bytes]:
    """hpack 4.2.0's package and test files, from its sdist on PyPI: repository path -> bytes."""
    sdist = released_sdist(work, PROJECT, VERSION, SDIST_SHA256)
    top = f"{PROJECT}-{VERSION}/"
    files, changelog = {}, ""
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            inside = member.name.removeprefix(top)
            if not member.isfile():
                continue
            if inside.startswith("src/hpack/"):
                files[inside] = archive.extractfile(member).read()
            elif inside in ORACLE:
                files[ORACLE[inside]] = archive.extractfile(member).read()
            elif inside == "CHANGELOG.rst":
                changelog = archive.extractfile(member).read().decode()
    assert set(ORACLE.values()) <= set(files) and IMPL in files, sorted(files)
    # The fix this test undoes, as the release notes in the same sdist record it.
    release_2_1_0 = " ".join(changelog[changelog.index("2.1.0 (2016-02-02)"):changelog.index("2.0.1 (2015-11-09)")].split())
    assert ("Instead of throwing ``IndexError`` when encountering invalid encoded integers HPACK now throws "
            "``HPACKDecodingError``.") in release_2_1_0, release_2_1_0
    return files


def without_the_2_1_0_fix(source: str) -> str:
    """`decode_integer` with commit 862a026 undone: the decoding loop unwrapped from its
    `try`, so running out of bytes raises IndexError again."""
    start = source.index("    try:\n        number = data[0] & mask\n")
    handler = source.index("    except IndexError as err:\n", start)
    after = source.index("    log.debug(\"Decoded %d, consumed %d bytes\"", handler)
    assert source[handler:after].strip().endswith("raise HPACKDecodingError(msg) from err"), source[handler:after]
    loop = textwrap.indent(textwrap.dedent(source[start + len("    try:\n"):handler]), "    ")
    return source[:start] + loop + "\n" + source[after:]


def refactored(source: str) -> str:
    """An honest change to the same function: the prefix mask computed another way (equal for 1 to 8 bits)."""
    old = "    mask = (0xFF >> (8 - prefix_bits))\n"
    assert source.count(old) == 1
    return source.replace(old, "    # The low `prefix_bits` bits of the first byte.\n    mask = (1 << prefix_bits) - 1\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> GitRepo:
    work = tmp_path_factory.mktemp("hpack")
    files = released(work)
    released_impl = files[IMPL].decode()
    return gated_repo(work / "repo", files, PYPROJECT, "hpack 4.2.0, gated by its own test_encode_decode.py", IMPL, (
        (BUG_BRANCH, without_the_2_1_0_fix(released_impl), "decode_integer without its IndexError handler"),
        (HONEST_BRANCH, refactored(released_impl), "compute the prefix mask with a shift")))


@pytest.fixture(scope="module")
def regression(repo: GitRepo) -> tuple[subprocess.CompletedProcess, Path]:
    return review(repo, BUG_BRANCH)


def the_witness(gate_dir: Path) -> Path:
    [path] = sorted((gate_dir / "witnesses").glob("*.json"))
    return path


def test_an_honest_refactor_of_the_decoder_passes_the_projects_own_tests(repo: GitRepo):
    passed, out = review(repo, HONEST_BRANCH)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "hpack: gate pass under the base's oracle and freezes, with the head's implementation" in passed.stdout
    assert re.search(r"hpack: pytest: 6 @given test\(s\) searched \(\d+-\d+ cases each\); plain tests \(run once; a failure blocks\): "
                     r"9 passed, 0 failed", passed.stdout), passed.stdout
    gate = json.loads((out / "hpack/gate.json").read_text())
    assert (gate["verdict"], gate["witnesses"]) == ("pass", [])


def test_the_indexerror_hpack_2_1_0_fixed_comes_back_as_a_regression(regression):
    blocked, out = regression
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert f"hpack: regression: {NODE} failed" in blocked.stdout, blocked.stdout
    assert "first failure: IndexError" in blocked.stdout
    assert "data=b''" in blocked.stdout  # the failing input, as Hypothesis printed it
    # The project's own plain tests of the same contract fail too: each blocks, named with its failure.
    assert re.search(r"pytest: 6 @given test\(s\) searched \(\d+-\d+ cases each\); plain tests \(run once; a failure blocks\): "
                     r"7 passed, 2 failed: tests/properties/test_encode_decode.py::TestIntegerDecoding::test_decode_empty_string_fails",
                     blocked.stdout), blocked.stdout
    assert ("hpack: blocked: tests/properties/test_encode_decode.py::TestIntegerDecoding::test_decode_empty_string_fails: "
            "a plain test (no @given, no state machine) failed: ") in blocked.stdout, blocked.stdout
    assert json.loads((out / "review.json").read_text())["suites"] == {"hpack": "blocked"}
    [row] = json.loads((out / "hpack/gate.json").read_text())["witnesses"]
    assert (row["assertion_id"], row["label"], row["cause"]) == (NODE, "regression", "deterministic"), row
    assert row["failures"] == row["runs"] > 0, row  # fails on every replay

    record = witness.load(the_witness(out / "hpack"))  # schema, hashes and file name checked
    assert (record["assertion_id"], record["origin"], record["fully_shrunk"]) == (NODE, "search", True), record
    assert set(record["payload"]) == {"choices"}, record["payload"]  # Hypothesis' choice sequence, not a JSON payload
    assert record["evidence"]["exception_type"] == "IndexError", record["evidence"]
    assert "data=b''" in record["given"]["failing_example"], record["given"]
    # The history the replays run first: the module's tests before it, in pytest's order.
    assert record["history"][-1]["assertion_id"] == NODE
    assert "tests/properties/test_encode_decode.py::TestIntegerDecoding::test_decode_empty_string_fails" in \
        [entry["assertion_id"] for entry in record["history"]]


def test_a_second_search_writes_the_same_witness_byte_for_byte(repo: GitRepo, regression):
    _, out = regression
    first = the_witness(out / "hpack")
    repo.git("checkout", "-q", BUG_BRANCH)
    try:
        (repo.root / "changed.txt").write_text(f"{IMPL}\n")
        again = cli(repo, "gate", "--fixture", "tests/fixtures/none.json", "--generator-version", "1", "--properties", "tests/properties",
                    "--diff-paths", "changed.txt", "--replays", "2", "--replay-interpreters", "3", "--out", ".artifacts/again")
    finally:
        (repo.root / "changed.txt").unlink(missing_ok=True)
        repo.git("checkout", "-q", "main")
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"regression: {NODE}" in again.stdout, again.stdout
    second = the_witness(repo.root / ".artifacts/again")
    assert second.name == first.name and second.read_bytes() == first.read_bytes()


REUSE_ONLY = '''
import base64, json, sys
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import ExampleDatabase

import test_encode_decode


class OnlyThis(ExampleDatabase):
    """An example database that holds one choice sequence under every key."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def save(self, key, value):
        pass

    def fetch(self, key):
        yield self.value

    def delete(self, key, value):
        pass


choices = base64.b64decode(json.loads(open(sys.argv[1]).read())["payload"]["choices"])
tests = test_encode_decode.TestEncodingProperties
test = settings(database=OnlyThis(choices), phases=[Phase.reuse], deadline=None, suppress_health_check=list(HealthCheck))(
    tests.test_decode_either_succeeds_or_raises_error)
try:
    test(tests())
except Exception as error:
    print("failed:", type(error).__name__, *getattr(error, "__notes__", []))
else:
    print("passed")
'''


def test_hypothesis_itself_replays_the_witness_to_the_same_input(repo: GitRepo, regression):
    """The witness is Hypothesis' own: handed to the unchanged test with `Phase.reuse` alone,
    outside the gate, it makes the same input; it fails on the pull request's decoder and
    passes on hpack 4.2.0's."""
    _, out = regression
    record = the_witness(out / "hpack")
    seen = {}
    for revision in ("main", BUG_BRANCH):
        tree = repo.root.parent / f"tree-{revision}"
        repo.git("worktree", "add", "-q", "--detach", str(tree), revision)
        replay_env = {**runner_env(), "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(tree / "tests/properties"), runner_env()["PYTHONPATH"]])}
        done = subprocess.run([sys.executable, "-c", REUSE_ONLY, str(record)], cwd=tree, env=replay_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        seen[revision] = done.stdout
    assert seen["main"].strip() == "passed", seen
    assert seen[BUG_BRANCH].startswith("failed: IndexError"), seen
    assert "data=b''" in seen[BUG_BRANCH] and "prefix_bits=1" in seen[BUG_BRANCH], seen
