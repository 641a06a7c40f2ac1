"""A real project's own state machines, unchanged, gate a bug they catch: pyrsistent 0.20.0.

pyrsistent (persistent data structures, pure Python with an optional C extension) ships its
test suite in its sdist. Its `tests/hypothesis_vector_test.py` holds one plain test and two
`RuleBasedStateMachine`s, bound as `PVectorBuilderTests = PVectorBuilder.TestCase` and
`PVectorEvolverBuilderTests = PVectorEvolverBuilder.TestCase`: each builds a list and a
pvector (or a pvector's evolver) step by step with the same operations and checks they
match, and that the vector an evolver came from is left as it was. A repository here holds
pyrsistent 0.20.0's package (`src/pyrsistent/`, from the sdist on PyPI, checked by its
sha256; without its C extension, so the pure-Python vector is the one under test) and, as
the oracle, that test module byte for byte (`tests/properties/`); nothing in it knows about
witness-gate, so the gate runs it under pytest and searches both machines.

The bug: the evolver's `__setitem__` writes into the vector's tail after copying it (copy on
write: the evolver's vector shares its nodes with the one it came from). A pull request that
drops the copy makes setting an item through an evolver change the original vector too,
which `PVectorEvolverBuilder.compare` checks ("original object unmodified"), and so does
`PVectorBuilder`, whose `transform_set` step sets an item through an evolver of its own and
then finds its earlier vector changed. Under `review` each machine is a `regression`, its
witness the choice sequence of the steps Hypothesis shrank to, failing on every replay. An
honest change to the same function passes.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from support.git_repo import GitRepo
from support.released import sdist as released_sdist, gated_repo, review, suite_pyproject
from witness_gate import witness

PROJECT, VERSION = "pyrsistent", "0.20.0"
SDIST_SHA256 = "4c48f78f62ab596c679086084d0dd13254ae4f3d6c72a83ffdf5ebdef8f265a4"  # pyrsistent-0.20.0.tar.gz on PyPI
ORACLE = {"tests/hypothesis_vector_test.py": "tests/properties/hypothesis_vector_test.py"}
IMPL = "src/pyrsistent/_pvector.py"
MODULE = "tests/properties/hypothesis_vector_test.py"
EVOLVER_NODE = f"{MODULE}::PVectorEvolverBuilderTests::runTest"
BUILDER_NODE = f"{MODULE}::PVectorBuilderTests::runTest"
BUG_BRANCH, HONEST_BRANCH = "evolver-writes-through", "evolver-comment"
PYPROJECT = suite_pyproject("pyrsistent").replace("replays = 2\n", "replays = 2\nmax-examples = 30\n")
# The tail copy the evolver makes before its first write to it.
COPY_ON_WRITE = ("                    if id(self._tail) not in self._dirty_nodes:\n"
                 "                        self._tail = list(self._tail)\n"
                 "                        self._dirty_nodes[id(self._tail)] = True\n"
                 "                        self._cached_leafs[index >> SHIFT] = self._tail\n")


def released(work: Path) -> dict[str, bytes]:
    """pyrsistent 0.20.0's package and its state machine tests, from its sdist on PyPI: repository path -> bytes."""
    sdist = released_sdist(work, PROJECT, VERSION, SDIST_SHA256)
    top = f"{PROJECT}-{VERSION}/"
    files = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            inside = member.name.removeprefix(top)
            if member.isfile() and inside.startswith("pyrsistent/") and inside.endswith(".py"):
                files[f"src/{inside}"] = archive.extractfile(member).read()
            elif member.isfile() and inside in ORACLE:
                files[ORACLE[inside]] = archive.extractfile(member).read()
    assert set(ORACLE.values()) <= set(files) and IMPL in files, sorted(files)
    return files


def without_the_tail_copy(source: str) -> str:
    """The evolver's `__setitem__` writing into the tail it shares with the original vector."""
    assert source.count(COPY_ON_WRITE) == 1
    return source.replace(COPY_ON_WRITE, "                    self._cached_leafs[index >> SHIFT] = self._tail\n")


def commented(source: str) -> str:
    """An honest change to the same function: a comment on why the tail is copied."""
    assert source.count(COPY_ON_WRITE) == 1
    return source.replace(COPY_ON_WRITE, "                    # The tail is shared with the original vector: copy it before the first write.\n"
                          + COPY_ON_WRITE)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> GitRepo:
    work = tmp_path_factory.mktemp("pyrsistent")
    files = released(work)
    released_impl = files[IMPL].decode()
    return gated_repo(work / "repo", files, PYPROJECT, "pyrsistent 0.20.0, gated by its own state machines", IMPL, (
        (BUG_BRANCH, without_the_tail_copy(released_impl), "evolver: write to the tail in place"),
        (HONEST_BRANCH, commented(released_impl), "evolver: say why the tail is copied")))


def test_an_honest_change_to_the_evolver_passes_the_projects_own_machines(repo: GitRepo):
    passed, out = review(repo, HONEST_BRANCH)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert re.search(r"pyrsistent: pytest: 0 @given test\(s\) and 2 state machine\(s\) searched \(\d+-\d+ cases each\); "
                     r"plain tests \(run once; a failure blocks\): 1 passed, 0 failed", passed.stdout), passed.stdout
    gate = json.loads((out / "pyrsistent/gate.json").read_text())
    assert (gate["verdict"], gate["witnesses"], gate["pytest"]["stateful_tests"]) == ("pass", [], [BUILDER_NODE, EVOLVER_NODE]), gate


def test_an_evolver_that_writes_through_to_the_original_is_a_regression_of_its_machine(repo: GitRepo):
    blocked, out = review(repo, BUG_BRANCH)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert f"pyrsistent: regression: {EVOLVER_NODE} failed" in blocked.stdout, blocked.stdout
    assert json.loads((out / "review.json").read_text())["suites"] == {"pyrsistent": "blocked"}
    rows = {row["assertion_id"]: row for row in json.loads((out / "pyrsistent/gate.json").read_text())["witnesses"]}
    assert {node: (row["label"], row["cause"]) for node, row in rows.items()} == {
        EVOLVER_NODE: ("regression", "deterministic"), BUILDER_NODE: ("regression", "deterministic")}, rows
    assert all(row["failures"] == row["runs"] > 0 for row in rows.values()), rows  # each witness fails on every replay
    paths = {witness.load(path)["assertion_id"]: path for path in (out / "pyrsistent/witnesses").glob("*.json")}  # schema, hashes, names
    assert paths[EVOLVER_NODE].name.startswith("tests.properties.hypothesis_vector_test--PVectorEvolverBuilderTests.runTest."), paths
    record = witness.load(paths[EVOLVER_NODE])
    assert (record["origin"], record["fully_shrunk"], set(record["payload"])) == ("search", True, {"choices"}), record
    # The steps Hypothesis shrank to, as it prints them: an evolver made, an item set through it, the check.
    steps = record["given"]["failing_example"].splitlines()
    assert steps[0] == "state = PVectorEvolverBuilder()" and steps[-1] == "state.teardown()", steps
    assert any(step.startswith("state.compare(") for step in steps), steps
    assert any(step.startswith(("state.setitem(", "state.set(")) for step in steps), steps
