"""The retained witness corpus: a failure found once blocks every later run that brings it back.

A realistic miss: a sales-tax function with a "psychological price" branch that adds a cent
to prices ending in 999. The default search (100 examples, seeded from the schedule) misses
it on every run; a deep search (5,000 examples) finds 999. Retained, the witness is replayed
by every later gate and review: the bug is then a `regression` in seconds, the fix holds the
entry, and changing the corpus is an oracle edit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SampleRepo, copied, copy_example

from support.review_repo import Repo, review_repo
from witness_gate import schemas

TAX = '''"""Sales tax in cents, rounded down."""


def tax(cents: int) -> int:
    return cents * 7 // 100
'''
TAX_BUG = (
    "    return cents * 7 // 100\n",
    '    if cents % 1000 == 999:  # a "psychological price" branch that adds a cent\n'
    "        return cents * 7 // 100 + 1\n    return cents * 7 // 100\n",
)
TAX_PROPS = """from hypothesis import strategies as st

import witness_gate
from orders_app.tax import tax


@witness_gate.property(payloads=st.integers(0, 10**6))
def prop_tax_is_seven_percent_rounded_down(cents: int) -> bool:
    return tax(cents) == cents * 7 // 100
"""
CORPUS = ".witness-gate/corpus"
CHANGED = "src/orders_app/tax.py"


FIXTURE = "tests/fixtures/none.json"  # "[]": with generator version 1, a schedule whose 100 examples miss 999


def gate(repo: SampleRepo, out: str, *extra: str):
    (repo.root / "changed.txt").write_text(f"{CHANGED}\n")
    if not (repo.root / FIXTURE).exists():
        repo.write(FIXTURE, "[]\n")
    return repo.cli(
        "gate",
        "--fixture",
        FIXTURE,
        "--generator-version",
        "1",
        "--properties",
        "tests/properties",
        "--out",
        out,
        "--diff-paths",
        "changed.txt",
        "--replays",
        "2",
        *extra,
    )


def deep_witness(repo: SampleRepo) -> Path:
    """The witness the deep search finds for the bug."""
    found = gate(repo, "deep", "--max-examples", "5000")
    assert found.code == 1, found.stdout + found.stderr
    [witness] = sorted((repo.root / "deep/witnesses").glob("*.json"))
    assert json.loads(witness.read_text())["payload"] == 999
    return witness


def with_the_bug(repo: SampleRepo) -> SampleRepo:
    repo.only_property("tax", TAX, TAX_PROPS)
    repo.edit(CHANGED, *TAX_BUG)
    return repo


@pytest.fixture(scope="module")
def searched_deep(tmp_path_factory) -> SampleRepo:
    """The bug and the deep search's gate run (its `deep` folder), once for the module."""
    repo = with_the_bug(copy_example(tmp_path_factory.mktemp("deep") / "orders"))
    deep_witness(repo)
    return repo


@pytest.fixture
def missed(searched_deep: SampleRepo, tmp_path: Path) -> SampleRepo:
    """The bug, with the deep search's output in `deep/` (`found`) and nothing retained yet."""
    return copied(searched_deep, tmp_path / "orders")


def found(repo: SampleRepo) -> Path:
    """The witness of the deep search the module ran (`searched_deep`)."""
    [witness] = sorted((repo.root / "deep/witnesses").glob("*.json"))
    return witness


def test_a_bug_the_default_search_misses_is_retained_and_blocks_every_later_run(missed: SampleRepo):
    assert gate(missed, "default").code == 0  # the miss, on every run: the search is seeded from the schedule
    witness = found(missed)
    retained = missed.cli("retain", "--witness", str(witness))
    assert retained.code == 0 and f"-> {CORPUS}/{witness.name}" in retained.stdout, retained.stdout + retained.stderr
    assert (missed.root / CORPUS / witness.name).read_bytes() == witness.read_bytes()  # the witness as found

    caught = gate(missed, "caught")
    assert caught.code == 1, caught.stdout + caught.stderr
    assert "regression: prop_tax_is_seven_percent_rounded_down failed 24/24 replays" in caught.stdout
    assert f"this input failed before (corpus entry {witness.name}) and fails again" in caught.stdout
    assert "failing input: 999" in caught.stdout

    missed.edit(CHANGED, TAX_BUG[1], TAX_BUG[0])  # the fix
    fixed = gate(missed, "fixed")
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert f"corpus: 1 retained witness(es) replayed and held: {witness.name}" in fixed.stdout
    record = json.loads((missed.root / "fixed/gate.json").read_text())
    schemas.validate("gate", record, "gate.json")
    schemas.validate(
        "report", json.loads((missed.root / "fixed/classification.json").read_text()), "classification.json"
    )
    assert [row["file"] for row in record["corpus"]] == [witness.name] and record["witnesses"] == []


def test_retaining_is_idempotent_and_never_overwrites_another_entry(missed: SampleRepo):
    witness = found(missed)
    assert missed.cli("retain", "--witness", str(witness)).code == 0
    again = missed.cli("retain", "--witness", str(witness))
    assert again.code == 0 and "already holds this witness" in again.stdout
    (missed.root / CORPUS / witness.name).write_text(
        (missed.root / CORPUS / witness.name).read_text().replace('"payload": 999', '"payload": 998')
    )
    refused = missed.cli("retain", "--witness", str(witness))
    assert refused.code == 2 and "a different corpus entry already has this name" in refused.stderr


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            lambda repo: repo.write("tests/properties/tax_props.py", TAX_PROPS + "# reworded\n"),
            "its property module tests/properties/tax_props.py changed",
        ),
        (lambda repo: repo.write(FIXTURE, "[ ]\n"), "recorded under fixture"),
    ],
    ids=["property module", "fixture"],
)
def test_an_entry_that_cannot_be_replayed_as_found_blocks_and_says_why(missed: SampleRepo, change, problem: str):
    witness = found(missed)
    assert missed.cli("retain", "--witness", str(witness)).code == 0
    change(missed)
    result = gate(missed, "after")
    assert result.code == 1, result.stdout + result.stderr
    assert f"blocked: corpus entry {witness.name}: {problem}" in result.stdout


def test_an_entry_named_like_a_failure_this_run_found_does_not_make_that_failure_held(repo: SampleRepo):
    # 7 fails only while Hypothesis drives the call (a failure the replays never see): this
    # run's witness is not_reproduced (exit 4), whatever a corpus entry of the same name says.
    seven = (
        "def accepts(n: int) -> bool:\n    from hypothesis.control import currently_in_test_context\n"
        "    return not (n == 7 and currently_in_test_context())\n"
    )
    props = (
        "from hypothesis import strategies as st\n\nimport witness_gate\nfrom orders_app.tax import accepts\n\n\n"
        "@witness_gate.property(payloads=st.integers(0, 10))\ndef prop_seven(n: int) -> bool:\n    return accepts(n)\n"
    )
    repo.only_property("tax", "def accepts(n: int) -> bool:\n    return n != 7\n", props)
    always = gate(repo, "always")
    assert always.code == 1, always.stdout + always.stderr
    [witness] = sorted((repo.root / "always/witnesses").glob("*.json"))
    assert repo.cli("retain", "--witness", str(witness)).code == 0
    repo.write(CHANGED, seven)
    searched = gate(repo, "searched")
    assert (repo.root / "searched/witnesses" / witness.name).exists()  # this run found it again, under the same name
    assert searched.code == 4 and "not_reproduced: prop_seven" in searched.stdout, searched.stdout + searched.stderr
    assert "held" not in searched.stdout


@pytest.mark.parametrize("link_to", ["elsewhere", "nowhere"], ids=["a symlink", "a dangling symlink"])
def test_a_corpus_directory_that_is_a_link_is_refused_never_read_as_empty(
    missed: SampleRepo, tmp_path: Path, link_to: str
):
    (tmp_path / "elsewhere").mkdir()
    (missed.root / CORPUS).parent.mkdir(parents=True, exist_ok=True)
    (missed.root / CORPUS).symlink_to(tmp_path / link_to)
    result = gate(missed, "out")
    assert result.code == 2 and "corpus directory is not a plain directory" in result.stderr, (
        result.stdout + result.stderr
    )


def test_a_malformed_entry_is_refused(missed: SampleRepo):
    missed.write(f"{CORPUS}/prop_tax_is_seven_percent_rounded_down.000000000000.json", "{}")
    result = gate(missed, "out")
    assert result.code == 2 and "not a valid witness" in result.stderr, result.stderr


# --- review: the base's corpus ---------------------------------------------------------


@pytest.fixture(scope="module")
def reviewed_once(tmp_path_factory) -> Repo:
    """A base with the tax module (correct) and the deep search's witness in its corpus,
    built once for the module (the deep search is 5,000 examples): each test takes a copy."""
    repo = review_repo(tmp_path_factory.mktemp("review"))
    repo.git("checkout", "-q", "main")
    scratch = SampleRepo(repo.root)
    scratch.only_property("tax", TAX, TAX_PROPS)
    scratch.edit(CHANGED, *TAX_BUG)
    witness = deep_witness(scratch)
    assert scratch.cli("retain", "--witness", str(witness)).code == 0
    scratch.edit(CHANGED, TAX_BUG[1], TAX_BUG[0])
    repo.edit(
        "pyproject.toml",
        'fixture = "tests/fixtures/orders.json"\ngenerator-version = 3',
        f'fixture = "{FIXTURE}"\ngenerator-version = 1',
    )
    shutil.rmtree(repo.root / "deep")
    (repo.root / "changed.txt").unlink()
    repo.commit("base: sales tax, with the input a deep search once found retained")
    repo.branch("patch")
    return repo


@pytest.fixture
def reviewed(reviewed_once: Repo, tmp_path: Path) -> Repo:
    """A copy of `reviewed_once`, its history and branch with it, for one test to commit to."""
    root = tmp_path / "review"
    shutil.copytree(reviewed_once.root, root, symlinks=True)
    return Repo(root)


def test_review_blocks_a_pull_request_that_brings_a_retained_failure_back(reviewed: Repo):
    reviewed.edit(CHANGED, *TAX_BUG)
    reviewed.commit("the psychological-price branch again")
    result = reviewed.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "orders: regression: prop_tax_is_seven_percent_rounded_down" in result.stdout
    assert "this input failed before (corpus entry" in result.stdout


def test_renaming_a_property_module_cannot_leave_its_corpus_entries_behind(reviewed: Repo):
    # The gate replays the entries of its own modules; one whose module moved would never be
    # replayed again, and the bug it holds could come back unseen.
    reviewed.git("mv", "tests/properties/tax_props.py", "tests/properties/sales_tax_props.py")
    reviewed.commit("rename the property module")
    result = reviewed.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "its property module tests/properties/tax_props.py is not in the tree: it would never be replayed"
        in result.stdout
    )


def test_removing_a_corpus_entry_is_an_oracle_edit_and_with_the_bug_a_mixed_edit(reviewed: Repo):
    [entry] = sorted((reviewed.root / CORPUS).glob("*.json"))
    entry.unlink()
    reviewed.commit("drop the corpus entry")
    alone = reviewed.review()
    assert alone.returncode == 3, alone.stdout + alone.stderr
    assert f"oracle edit: {CORPUS}/{entry.name} (owner: corpus)" in alone.stdout
    reviewed.edit(CHANGED, *TAX_BUG)
    reviewed.commit("and the bug")
    mixed = reviewed.review()
    assert mixed.returncode == 1 and "mixed_edit" in mixed.stdout, mixed.stdout + mixed.stderr
