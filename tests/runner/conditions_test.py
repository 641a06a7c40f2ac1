"""Declared production conditions: bugs that only the production environment shows.

Two realistic bugs that pass under the workers' fixed environment (TZ=UTC, no variable of
the caller's): an invoice dated in local time where the ledger books UTC days, and a tax
table chosen by an environment variable read at import. Declared, each is a `regression`
whose witness records the condition and replays under it, byte for byte.
"""

from __future__ import annotations

import json

import pytest
from conftest import SampleRepo

from witness_gate import conditions, schemas
from witness_gate.errors import WitnessGateError
from witness_gate.lock import DEFAULT_REPLAY_INTERPRETERS
from witness_gate.replay import plan_round

INVOICE = '''"""Invoice dates: the day a payment was taken, as the ledger books it (UTC days)."""
import datetime


def invoice_date(timestamp: int) -> str:
    return datetime.datetime.fromtimestamp(timestamp).date().isoformat()  # the bug: local time
'''
INVOICE_PROPS = """import datetime

from hypothesis import strategies as st

import witness_gate
from orders_app.invoice import invoice_date


@witness_gate.property(payloads=st.integers(0, 2_000_000_000))
def prop_invoice_date_is_the_utc_day(timestamp: int) -> bool:
    return invoice_date(timestamp) == datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).date().isoformat()
"""  # noqa: E501 (test data: a source file, as written)
TAX = '''"""Sales tax in cents; the region's table is chosen once, from the deployment's environment."""
import os

RATES = {"EU": (20, 100), "US": (7, 100)}
NUMERATOR, DENOMINATOR = RATES[os.environ.get("SHOP_REGION", "EU")]


def tax(cents: int) -> int:
    if DENOMINATOR == 100 and NUMERATOR < 10:
        return cents * NUMERATOR // 1000  # the bug: the US branch divides by ten too many
    return cents * NUMERATOR // DENOMINATOR
'''
TAX_PROPS = """from hypothesis import strategies as st

import witness_gate
from orders_app.tax import DENOMINATOR, NUMERATOR, tax


@witness_gate.property(payloads=st.integers(0, 10**9))
def prop_tax_is_the_rate_rounded_down(cents: int) -> bool:
    return tax(cents) == cents * NUMERATOR // DENOMINATOR
"""
NEW_YORK = "TZ=America/New_York"
# A valid witness (payload 0) to put a condition in.
WITNESS_TEMPLATE = {
    "assertion_id": "prop_x",
    "evidence": {"exception_type": None, "kind": "returned_false", "message": "property returned False"},
    "expect": "accept",
    "fixture_digest": "37517e5f3dc66819f61f5a7bb8ace1921282415f10551d2defa5c3eb0985b570",
    "fully_shrunk": True,
    "generator_version": 1,
    "hash_secret": 3423413228,
    "history": [],
    "hypothesis_version": "6.170.17",
    "origin": "search",
    "payload": 0,
    "property": {
        "line": 9,
        "path": "tests/properties/x_props.py",
        "sha256": "999716f2cd3a2cfb01e6ee7a026d4b0ba8e25ca2a3f019f81f2872ee6e5670b1",
    },
    "random_seed": 805436621104459142,
    "schema_version": 2,
    "seed": 14517584434129230248,
    "unshrunk": {
        "history": [],
        "payload": 0,
        "random_seed": 805436621104459142,
        "witness_hash": "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9",
    },
    "witness_hash": "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9",
}


def gate(repo: SampleRepo, out: str, *conditions_declared: str):
    (repo.root / "changed.txt").write_text("src/orders_app/pricing.py\n")
    return repo.cli(
        "gate",
        "--fixture",
        "tests/fixtures/orders.json",
        "--generator-version",
        "3",
        "--properties",
        "tests/properties",
        "--out",
        out,
        "--diff-paths",
        "changed.txt",
        "--replays",
        "2",
        *(arg for condition in conditions_declared for arg in ("--condition", condition)),
    )


def witness_of(repo: SampleRepo, out: str) -> tuple[str, bytes]:
    [path] = sorted((repo.root / out / "witnesses").glob("*.json"))
    return path.name, path.read_bytes()


def test_a_local_time_bug_passes_the_defaults_and_is_a_regression_where_it_is_declared(repo: SampleRepo):
    repo.only_property("invoice", INVOICE, INVOICE_PROPS)
    hidden = gate(repo, "out-default")
    assert hidden.code == 0, hidden.stdout + hidden.stderr  # what the defaults hide: the workers run in UTC

    found = gate(repo, "out-declared", "", NEW_YORK)
    assert found.code == 1, found.stdout + found.stderr
    assert "regression: prop_invoice_date_is_the_utc_day failed 24/24 replays" in found.stdout
    assert "under the declared condition TZ=America/New_York" in found.stdout
    name, data = witness_of(repo, "out-declared")
    record = json.loads(data)
    schemas.validate("witness", record, name)
    assert record["condition"] == {"TZ": "America/New_York"}
    lock = json.loads((repo.root / "out-declared/fixture.lock").read_text())
    schemas.validate("lock", lock, "fixture.lock")
    assert lock["conditions"] == [{}, {"TZ": "America/New_York"}]

    again = gate(repo, "out-again", "", NEW_YORK)
    assert again.code == 1
    assert witness_of(repo, "out-again") == (name, data)  # the same witness, byte for byte

    # A reviewer's replay runs under the witness's own condition too.
    verified = repo.cli(
        "verify",
        "--lock",
        "out-declared/fixture.lock",
        "--witnesses",
        "out-declared/witnesses",
        "--report",
        "out-declared/classification.json",
        "--diff-paths",
        "changed.txt",
    )
    assert verified.code == 0, verified.stdout + verified.stderr
    assert f"ok: replay {name}" in verified.stdout, verified.stdout


def test_an_environment_dependent_bug_is_found_under_the_declared_variable(repo: SampleRepo):
    repo.only_property("tax", TAX, TAX_PROPS)
    assert gate(repo, "out-default").code == 0  # the default region is right

    found = gate(repo, "out-declared", "", "SHOP_REGION=US")
    assert found.code == 1, found.stdout + found.stderr
    assert "regression: prop_tax_is_the_rate_rounded_down failed 24/24 replays" in found.stdout
    assert "shrunk payload failed 24 of 24 replays under the declared condition SHOP_REGION=US" in found.stdout
    _, data = witness_of(repo, "out-declared")
    assert json.loads(data)["condition"] == {"SHOP_REGION": "US"}


def test_a_condition_with_hash_randomization_off_runs_every_worker_under_it(repo: SampleRepo):
    repo.only_property("invoice", INVOICE, INVOICE_PROPS)
    found = gate(repo, "out", f"{NEW_YORK} PYTHONHASHSEED=0")
    assert found.code == 1, found.stdout + found.stderr
    _, data = witness_of(repo, "out")
    record = json.loads(data)
    assert (record["hash_secret"], record["condition"]) == (0, {"PYTHONHASHSEED": "0", "TZ": "America/New_York"})
    report = json.loads((repo.root / "out/classification.json").read_text())
    secrets = {row["hash_secret"] for variant in report["witnesses"][0]["variants"] for row in variant["interpreters"]}
    assert secrets == {0}


def test_a_time_zone_the_machine_lacks_blocks_rather_than_falling_back_to_utc(repo: SampleRepo):
    repo.only_property("invoice", INVOICE, INVOICE_PROPS)
    result = gate(repo, "out", "TZ=America/Atlantis")
    assert result.code == 1, result.stdout + result.stderr
    assert "condition TZ=America/Atlantis: no such time zone on this machine" in result.stdout


@pytest.mark.parametrize(
    "text, problem",
    [
        ("LD_PRELOAD=/tmp/x.so", "decides what the interpreter or a library loads"),
        ("PYTHONPATH=/tmp", "decides what the interpreter or a library loads"),
        ("PATH=/tmp", "decides what the interpreter or a library loads"),
        ("HYPOTHESIS_PROFILE=ci", "decides what the interpreter or a library loads"),
        # Seen loading a shared object of the tree into every worker (an OpenSSL provider).
        ("OPENSSL_CONF=src/evil.cnf", "decides what the interpreter or a library loads"),
        ("GCONV_PATH=src", "decides what the interpreter or a library loads"),
        # Seen making a declared time zone or locale quietly fall back to UTC or C.
        ("TZDIR=/nonexistent", "or where it looks files up"),
        ("LOCPATH=/nonexistent", "or where it looks files up"),
        ("tz=UTC", "upper-case letters"),
        ("TZ", "write NAME=VALUE"),
        ("TZ=UTC TZ=Europe/Paris", "set twice"),
        ("PYTHONHASHSEED=-1", "integer from 0 to 4294967295"),
        ("PYTHONHASHSEED=4294967296", "integer from 0 to 4294967295"),
        ("TZ=../../etc/passwd", "name a time zone"),
        ("TZ=:/etc/localtime", "name a time zone"),
    ],
)
def test_what_cannot_be_declared_is_refused_with_the_reason(text: str, problem: str):
    with pytest.raises(WitnessGateError, match=problem):
        conditions.parse(text, "--condition")


def test_a_locale_the_machine_lacks_blocks_even_when_it_is_not_lc_all(repo: SampleRepo):
    # The workers' fixed LC_ALL would override a declared LANG or LC_NUMERIC: the condition
    # would name one locale and test C.UTF-8.
    assert conditions.apply({"LC_ALL": "C.UTF-8", "TZ": "UTC"}, {"LANG": "xx_YY.UTF-8"}) == {
        "TZ": "UTC",
        "LANG": "xx_YY.UTF-8",
    }
    repo.only_property("invoice", INVOICE, INVOICE_PROPS)
    for declared in ("LANG=xx_YY.UTF-8", "LC_NUMERIC=xx_YY.UTF-8"):
        result = gate(repo, "out", declared)
        assert result.code == 1 and f"condition {declared}: this machine has no such locale" in result.stdout, (
            result.stdout + result.stderr
        )


def test_a_witness_whose_condition_no_declaration_could_say_is_refused(tmp_path):
    from witness_gate import witness

    for condition, problem in [
        ({"PYTHONHASHSEED": "x"}, "PYTHONHASHSEED"),
        ({"PYTHONHASHSEED": "4294967296"}, "integer from 0 to 4294967295"),
        ({"TZ": "/etc/localtime"}, "name a time zone"),
    ]:
        path = tmp_path / "prop_x.5feceb66ffc8.json"
        path.write_text(json.dumps({**WITNESS_TEMPLATE, "condition": condition}))
        with pytest.raises(WitnessGateError, match=problem):
            witness.load(path)


def test_a_matrix_is_ordered_unique_and_small():
    assert conditions.check_matrix([{}, {"TZ": "UTC", "A": "1"}], "m") == ({}, {"A": "1", "TZ": "UTC"})
    with pytest.raises(WitnessGateError, match="declared twice"):
        conditions.check_matrix([{"TZ": "UTC"}, {"TZ": "UTC"}], "m")
    with pytest.raises(WitnessGateError, match="at most 16"):
        conditions.check_matrix([{"N": str(n)} for n in range(17)], "m")
    with pytest.raises(WitnessGateError, match="a table of environment variables"):
        conditions.check_matrix(["TZ=UTC"], "m")
    with pytest.raises(WitnessGateError, match="at most 32 variables"):
        conditions.check_matrix([{f"V{n}": "1" for n in range(33)}], "m")


def test_a_search_salt_that_is_not_one_word_is_refused(repo: SampleRepo):
    refused = repo.pin("--search-salt", "a b")
    assert (
        refused.code == 2 and "--search-salt 'a b': 1 to 128 letters, digits and . _ -" in refused.stderr
    ), refused.stderr


def test_replays_vary_hash_randomization_off_among_their_secrets_unless_a_condition_fixes_one():
    lock = {"seed_schedule": [11], "replay_interpreters": DEFAULT_REPLAY_INTERPRETERS, "replays": 5}
    secrets = [interpreter.hash_secret for interpreter in plan_round(lock, 0, search_secret=7, search_pid_offset=3)]
    assert secrets[0] == 7 and secrets[1] == secrets[2] == 0 and len(set(secrets)) == DEFAULT_REPLAY_INTERPRETERS // 2
    fixed = plan_round(lock, 1, search_secret=7, search_pid_offset=3, condition={"PYTHONHASHSEED": "42"})
    assert {interpreter.hash_secret for interpreter in fixed} == {42}


def test_review_searches_under_the_conditions_the_base_declares(tmp_path):
    from support.review_repo import review_repo

    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "src/orders_app/tax.py").write_text(
        TAX.replace(
            "cents * NUMERATOR // 1000  # the bug: the US branch divides by ten too many",
            "cents * NUMERATOR // DENOMINATOR",
        )
    )
    (repo.root / "tests/properties/tax_props.py").write_text(TAX_PROPS)
    repo.edit("pyproject.toml", "replays = 2\n", 'replays = 2\nconditions = [{}, {SHOP_REGION = "US"}]\n')
    repo.commit("base: a tax table per region, both regions declared")
    repo.branch("patch")
    (repo.root / "src/orders_app/tax.py").write_text(TAX)
    repo.commit("the US branch, rewritten with a bug")
    result = repo.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "orders: regression: prop_tax_is_the_rate_rounded_down failed 24/24 replays" in result.stdout
    assert "under the declared condition SHOP_REGION=US" in result.stdout
