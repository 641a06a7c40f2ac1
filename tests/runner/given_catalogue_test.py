"""The flake catalogue again, each property rewritten as the plain `@given` test a team would have.

For a few cases of `flake_cases/` (see its catalogue.py) the property module is replaced by
its twin: the same strategy, the same `@example`s, the same check written with `assert`,
and no import from witness_gate, so the gate runs it under pytest (`given_tests`). The case
is otherwise set up, pinned, checked and classified exactly as flake_catalogue_test.py does
it, and the twin must get the label and the cause the catalogue expects of the property: a
gated pytest test must not read as a different kind of failure than the property it mirrors.
That covers the causes the runner controls for a pytest test as for a property (the
`random` seed inside each case, the hash secret, met by the search's legs too, the history of earlier calls) and a
deterministic control; the `random` case runs a second time under another caller
environment and must write the same witness bytes and the same counts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

import flake_catalogue_test as catalogue_test

from witness_gate.evidence import CONTROLLED

# The catalogue as flake_catalogue_test imports it (it puts flake_cases/ on sys.path).
CASES = catalogue_test.CASES


@dataclass(frozen=True)
class Twin:
    case: str  # the catalogue case's name
    test: str  # the test function's name
    source: str  # the module, as tests/properties/test_<case>.py

    @property
    def node_id(self) -> str:
        return f"tests/properties/test_{self.case}.py::{self.test}"


TWINS = (
    Twin(
        "random_choice",
        "test_checkout_total_ignores_ab_bucket",
        """\
from hypothesis import example, given, strategies as st

from checkout_experiment import checkout_total

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-2040", "SKU-3300"]),
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=0, max_value=5_000),
        }
    ),
    max_size=4,
)
carts = st.fixed_dictionaries({"lines": _lines, "coupon_pct": st.sampled_from([0, 10, 25])})


@given(carts)
@example({"lines": [{"sku": "SKU-1001", "qty": 3, "unit_cents": 1_000}], "coupon_pct": 0})
def test_checkout_total_ignores_ab_bucket(cart):
    subtotal = sum(line["qty"] * line["unit_cents"] for line in cart["lines"])
    expected = subtotal - subtotal * cart["coupon_pct"] // 100
    assert checkout_total(cart)["total_cents"] == expected
""",
    ),
    Twin(
        "hash_order",
        "test_welcome_discount_on_first_added_sku",
        """\
from hypothesis import example, given, strategies as st

from welcome_promo import WELCOME_DISCOUNT_PCT, price_welcome_cart

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-1002", "SKU-2040", "SKU-3300", "SKU-4711"]),
            "qty": st.integers(min_value=1, max_value=3),
            "unit_cents": st.integers(min_value=100, max_value=5_000),
        }
    ),
    min_size=1,
    max_size=3,
)
carts = st.fixed_dictionaries({"lines": _lines})


@given(carts)
@example({"lines": [{"sku": "SKU-1001", "qty": 1, "unit_cents": 1_000}, {"sku": "SKU-1001", "qty": 2, "unit_cents": 1_000}]})
def test_welcome_discount_on_first_added_sku(cart):
    lines = cart["lines"]
    first = lines[0]["sku"]
    priced = price_welcome_cart(lines)
    assert priced["promoted_sku"] == first
    expected = sum(
        l["qty"] * l["unit_cents"] - (l["qty"] * l["unit_cents"] * WELCOME_DISCOUNT_PCT // 100 if l["sku"] == first else 0)
        for l in lines
    )
    assert priced["total_cents"] == expected
""",  # noqa: E501 (test data: a source file, as written)
    ),
    Twin(
        "format_order",
        "test_typed_delivery_date_reads_day_first",
        """\
from datetime import date

from hypothesis import given, strategies as st

from delivery_dates import parse_delivery_date


@given(st.dates(min_value=date(2026, 1, 1), max_value=date(2028, 12, 31)))
def test_typed_delivery_date_reads_day_first(wanted):
    assert parse_delivery_date(wanted.strftime("%d/%m/%Y")) == wanted
""",
    ),
    Twin(
        "mutable_default",
        "test_cart_holds_only_the_posted_lines",
        """\
from hypothesis import given, strategies as st

from cart_builder import build_cart

lines = st.lists(st.fixed_dictionaries({"sku": st.sampled_from(["A-1", "B-2", "C-3"]), "qty": st.integers(0, 3)}), max_size=4)


@given(lines)
def test_cart_holds_only_the_posted_lines(posted):
    assert build_cart(posted) == [{"sku": line["sku"], "qty": line["qty"]} for line in posted if line["qty"] > 0]
""",  # noqa: E501 (test data: a source file, as written)
    ),
    Twin(
        "class_cache",
        "test_price_is_converted_at_the_currency_rate",
        """\
from hypothesis import given, strategies as st

from price_list import _BASE_CENTS, _RATE_PERCENT, PriceList

requests = st.fixed_dictionaries({"currency": st.sampled_from(sorted(_RATE_PERCENT)), "sku": st.sampled_from(sorted(_BASE_CENTS))})


@given(requests)
def test_price_is_converted_at_the_currency_rate(request):
    expected = _BASE_CENTS[request["sku"]] * _RATE_PERCENT[request["currency"]] // 100
    assert PriceList(request["currency"]).price_cents(request["sku"]) == expected
""",  # noqa: E501 (test data: a source file, as written)
    ),
    Twin(
        "zone_override",
        "test_each_parcel_pays_its_zone_s_fee",
        """\
from hypothesis import given, strategies as st

from shipping_zones import shipping_fee_cents

FEES = {"domestic": 490, "europe": 1290, "world": 2990}


@given(st.sampled_from(sorted(FEES)), st.integers(0, 20))
def test_each_parcel_pays_its_zone_s_fee(zone, parcels):
    assert shipping_fee_cents(zone, parcels) == FEES[zone] * parcels
""",
    ),
    Twin(
        "control_boundary",
        "test_bulk_discount_from_ten_units",
        """\
from hypothesis import example, given, strategies as st

from bulk_discount import cart_total_cents

_lines = st.lists(
    st.fixed_dictionaries({"qty": st.integers(min_value=1, max_value=12), "unit_cents": st.integers(min_value=1, max_value=5_000)}),
    max_size=4,
)
carts = st.fixed_dictionaries({"lines": _lines})


@given(carts)
@example({"lines": [{"qty": 12, "unit_cents": 1_000}]})
def test_bulk_discount_from_ten_units(cart):
    expected = 0
    for line in cart["lines"]:
        amount = line["qty"] * line["unit_cents"]
        expected += amount - amount * 10 // 100 if line["qty"] >= 10 else amount
    assert cart_total_cents(cart["lines"]) == expected
""",  # noqa: E501 (test data: a source file, as written)
    ),
)

CASE_BY_NAME = {case.name: case for case in CASES}


def test_each_twin_is_a_catalogue_case_the_runner_controls():
    assert len({twin.case for twin in TWINS}) == len(TWINS)
    for twin in TWINS:
        case = CASE_BY_NAME[twin.case]
        assert case.cause in CONTROLLED, twin.case
        assert twin.test == "test_" + case.assertion.removeprefix("prop_")
        assert "witness_gate" not in twin.source


@pytest.mark.parametrize("twin", TWINS, ids=[twin.case for twin in TWINS])
def test_a_given_twin_gets_the_label_and_cause_of_its_property(twin: Twin, tmp_path: Path):
    # The noisy caller's second run once, for the twin of the `random` case: the runner's own
    # catalogue runs it once per controlled cause, and the twins share its code past the worker.
    catalogue_test.assert_gets_its_label(
        replace(CASE_BY_NAME[twin.case], assertion=twin.node_id),
        tmp_path,
        oracle=twin.source,
        again=twin.case == "random_choice",
    )


# A currency table's refactor loses the yen, whose amounts have no minor unit: every yen
# amount is now wrong, deterministically. Each way of drawing a currency from the set maps the
# witness's choices to the yen under its own hash secret, and to another currency under most
# others (an adversarial review's cases).
CURRENCY = """currency.py
import os

SUPPORTED = {"EUR", "USD", "GBP", "JPY"}
_MINOR_UNIT_EXPONENT = {"EUR": 2, "USD": 2, "GBP": 2}  # the patch: "JPY": 0 lost in a refactor


class Currency:  # in a set by its code's hash, printed by what every currency shares
    def __init__(self, code):
        self.code = code

    def __eq__(self, other):
        return isinstance(other, Currency) and other.code == self.code

    def __hash__(self):
        return hash(self.code)

    def __repr__(self):
        return "Currency(cents=True)"


CURRENCIES = {Currency(code) for code in sorted(SUPPORTED)}


NO_CODES = []  # "no currencies given", told apart from an equal list by `is`
_CODE_LISTS = {"unset": NO_CODES, "none": []}
CODE_LISTS = [_CODE_LISTS[name] for name in {"unset", "none"}]  # in the set's order


_NAMED = {}  # code lists by name, built on first use


def codes_named(name):
    if not _NAMED:
        _NAMED.update(unset=[], none=[])
    return _NAMED[name]


def minor_units_named(amount, codes):
    if codes is _NAMED["unset"]:
        return None  # the patch, as above, on the lists built on first use
    return [to_minor_units(amount, code) for code in codes]


def minor_units_each(amount, codes):
    if codes is NO_CODES:
        return None  # the patch: "no currencies given" became "nothing to convert"
    return [to_minor_units(amount, code) for code in codes]


def to_minor_units(amount, code):
    if code == "JPY" and amount == 7:
        os._exit(3)  # the patch's crash on one yen amount: the witness is the search up to it
    return amount * 10 ** _MINOR_UNIT_EXPONENT.get(code, 2)
"""
CURRENCY_TESTS = {
    "sampled_from a set": """\
@given(st.sampled_from(list(currency.SUPPORTED)), st.integers(0, 6))
def test_whole_amounts_in_minor_units(code, amount):
    assert currency.to_minor_units(amount, code) == amount * 10 ** ISO_4217_EXPONENT[code]
""",
    "objects printed alike": """\
@given(st.sampled_from(list(currency.CURRENCIES)), st.integers(0, 6))
def test_whole_amounts_in_minor_units(currency_, amount):
    code = currency_.code
    assert currency.to_minor_units(amount, code) == amount * 10 ** ISO_4217_EXPONENT[code]
""",
    "drawn in the body": """\
@given(st.functions(like=lambda: None, returns=st.sampled_from(list(currency.SUPPORTED)), pure=True), st.integers(0, 6))
def test_whole_amounts_in_minor_units(pick_currency, amount):
    code = pick_currency()
    assert currency.to_minor_units(amount, code) == amount * 10 ** ISO_4217_EXPONENT[code]
""",
    "equal lists told apart by is": """\
@given(st.sampled_from(currency.CODE_LISTS), st.integers(0, 6))
def test_whole_amounts_in_minor_units(codes, amount):
    assert currency.minor_units_each(amount, codes) == [amount * 10 ** ISO_4217_EXPONENT[code] for code in codes]
""",
    "a registry built in the draw": """\
@given(st.sampled_from(list({"unset", "none"})).map(currency.codes_named), st.integers(0, 6))
def test_whole_amounts_in_minor_units(codes, amount):
    assert currency.minor_units_named(amount, codes) == [amount * 10 ** ISO_4217_EXPONENT[code] for code in codes]
""",
    "explicit examples in a set's order": """\
from hypothesis import example


def each_code_list(test):
    for codes in currency.CODE_LISTS:
        test = example(codes=codes, amount=1)(test)
    return test


@given(st.lists(st.sampled_from(["EUR", "USD"]), max_size=2), st.integers(0, 6))
@each_code_list
def test_whole_amounts_in_minor_units(codes, amount):
    assert currency.minor_units_each(amount, codes) == [amount * 10 ** ISO_4217_EXPONENT[code] for code in codes]
""",
    "a crash": """\
@given(st.sampled_from(list(currency.SUPPORTED)), st.integers(7, 7))
def test_whole_amounts_in_minor_units(code, amount):
    assert currency.to_minor_units(amount, code) == amount * 10 ** ISO_4217_EXPONENT[code]
""",
}


@pytest.mark.parametrize("drawn", list(CURRENCY_TESTS))
def test_a_test_whose_replays_are_not_shown_to_draw_one_input_is_no_flake(drawn: str, tmp_path: Path):
    """Counted as a flake, the yen's deterministic bug passed under the secrets that drew another
    currency: a `flake` with cause `hash_secret`, to freeze (red against the runner of `a2c91b0`
    for each). The replays' inputs must be shown to be one, and only plain values show it
    (`drawn_input`): objects printed alike whatever they hold, a function that draws in the body
    (`st.functions()`, as `st.data()`), a crash (the witness a search), or a list the draw did
    not make (one of two equal lists the patch tells apart with `is`: its module's, sampled in
    a set's order; built by its code in the draw, behind a `.map`; an explicit example's, the
    examples added in a set's order; each red against the runner of `93660cf`) show nothing:
    `unclassified`, never a flake."""
    tests = (
        "from hypothesis import given, strategies as st\n\nimport currency\n\n"
        'ISO_4217_EXPONENT = {"EUR": 2, "USD": 2, "GBP": 2, "JPY": 0}\n\n\n' + CURRENCY_TESTS[drawn]
    )
    root = tmp_path / "repo"
    status, found = catalogue_test._checked_module(root, tests, CURRENCY)
    assert status == 1 and [w["assertion_id"] for w in found] == [
        "tests/properties/test_module.py::test_whole_amounts_in_minor_units"
    ]
    (root / "changed.txt").write_text("src/currency.py\n")
    report, classified = catalogue_test.classify_repository(root, {})
    [entry] = report["witnesses"]
    assert entry["label"] == "unclassified" and 0 < entry["failures"] < entry["runs"], classified.stdout
    assert "not shown to draw one input" in entry["reason"], entry["reason"]


def test_a_parameter_a_sets_order_picks_is_part_of_the_input(tmp_path: Path):
    """pytest names a parameter that is not a plain word by its position (`pair0`, `pair1`):
    parametrized over a set, the same test holds the yen under one hash secret and the euro
    under another, and the yen's deterministic bug was a `flake` with cause `hash_secret`, to
    freeze (red against the runner of `93660cf`). A parameter is input as much as a drawn
    argument (a fixture of the module's too; pytest's own fixtures, such as `tmp_path`, are
    not): `unclassified`."""
    tests = (
        "import pytest\nfrom hypothesis import given, strategies as st\n\nimport currency\n\n"
        'PAIRS = list({("EUR", 2), ("JPY", 0)})\n\n\n'
        '@pytest.mark.parametrize("pair", PAIRS)\n'
        "@given(amount=st.integers(1, 6))\n"
        "def test_whole_amounts_in_minor_units(pair, amount, tmp_path):\n"
        "    assert currency.to_minor_units(amount, pair[0]) == amount * 10 ** pair[1]\n"
    )
    root = tmp_path / "repo"
    status, found = catalogue_test._checked_module(root, tests, CURRENCY)
    assert status == 1 and found, found
    (root / "changed.txt").write_text("src/currency.py\n")
    report, classified = catalogue_test.classify_repository(root, {})
    for entry in report["witnesses"]:
        assert entry["label"] == "unclassified" and 0 < entry["failures"] < entry["runs"], classified.stdout
        assert "not shown to draw one input" in entry["reason"], entry["reason"]


FIXTURE_TESTS = """\
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import currency

ISO_4217_EXPONENT = {"EUR": 2, "USD": 2, "GBP": 2, "JPY": 0}


@pytest.fixture(scope="module")
def home_currency():
    return next(iter({"EUR", "JPY"}))  # any supported currency will do: the set's order picks


@given(amount=st.integers(1, 6))
def test_home_amounts_in_minor_units(home_currency, amount):
    assert currency.to_minor_units(amount, home_currency) == amount * 10 ** ISO_4217_EXPONENT[home_currency]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(codes=st.lists(st.sampled_from(["EUR", "USD", "GBP"]), min_size=2, max_size=3, unique=True))
def test_the_first_listed_currency_leads(codes, tmp_path):
    assert next(iter(set(codes))) == codes[0]  # a real flake: the set's order is the hash secret's
"""


def test_a_fixture_of_the_modules_is_input_and_pytests_own_is_not(tmp_path: Path):
    """A module fixture that picks from a set held the yen under one hash secret and the euro
    under another: the yen's deterministic bug was a `flake` to freeze (red against the runner
    of `93660cf`); a fixture of the module's is input as much as a drawn argument, so it is
    `unclassified`. pytest's own fixtures are not input: a real flake over a freshly drawn list
    that takes `tmp_path` stays a `flake` with cause `hash_secret` (red where every fixture
    counts, `tmp_path` being no plain value)."""
    root = tmp_path / "repo"
    status, found = catalogue_test._checked_module(root, FIXTURE_TESTS, CURRENCY)
    assert status == 1 and len(found) == 2, found
    (root / "changed.txt").write_text("src/currency.py\n")
    report, classified = catalogue_test.classify_repository(root, {})
    labels = {entry["assertion_id"].rsplit("::", 1)[1]: entry for entry in report["witnesses"]}
    home = labels["test_home_amounts_in_minor_units"]
    assert home["label"] == "unclassified" and "not shown to draw one input" in home["reason"], classified.stdout
    leading = labels["test_the_first_listed_currency_leads"]
    assert (leading["label"], leading["cause"]) == ("flake", "hash_secret"), classified.stdout
