"""The flake-case catalogue: one realistic flaky implementation bug per root-cause class.

Classes follow the Python flaky-test literature (Gruber et al., ICST 2021; IDoFT), plus
deterministic controls. Each case is a directory <name>/ with src/ (the buggy module)
and properties/ (the property that catches it). Pure data: imports nothing from the cases.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str  # the directory name
    root_cause: str  # one line
    kind: str  # "nondeterministic", "state" or "control"
    controlled_by: str  # "random", "hash", "history" when the gate controls the cause; "none" otherwise; "" for controls
    assertion: str  # the property function name


CASES = (
    Case(
        name="random_choice",
        root_cause="unseeded global random: A/B variant drawn per request with random.choice, one variant misapplies coupons",
        kind="nondeterministic",
        controlled_by="random",
        assertion="prop_checkout_total_ignores_ab_bucket",
    ),
    Case(
        name="uuid_ids",
        root_cause="uuid4 line ids sorted as if they were a creation-ordered sequence",
        kind="nondeterministic",
        controlled_by="none",
        assertion="prop_invoice_rows_follow_cart_order",
    ),
    Case(
        name="hash_order",
        root_cause="iteration order of a set of strings (PYTHONHASHSEED) picks the discounted product",
        kind="nondeterministic",
        controlled_by="hash",
        assertion="prop_welcome_discount_on_first_added_sku",
    ),
    Case(
        name="time_window",
        root_cause="wall clock: token iat rounded at issue, truncated at verification, refused in the second half of each second",
        kind="nondeterministic",
        controlled_by="none",
        assertion="prop_fresh_login_tokens_verify",
    ),
    Case(
        name="thread_race",
        root_cause="unlocked read-modify-write of a shared dict by thread-pool workers (lost update)",
        kind="nondeterministic",
        controlled_by="none",
        assertion="prop_tax_summary_adds_up",
    ),
    Case(
        name="memo_previous",
        root_cause="last-result memo keyed by customer id only, ignoring the cart",
        kind="state",
        controlled_by="history",
        assertion="prop_quote_prices_requested_cart",
    ),
    Case(
        name="id_cache",
        root_cause="memo keyed by id(row): a freed order row's memory is reused by the next row",
        kind="state",
        controlled_by="history",
        assertion="prop_checkout_total_of_loaded_order",
    ),
    Case(
        name="float_set_order",
        root_cause="float sum in set (string hash) order compared with == against a sum in posting order",
        kind="nondeterministic",
        controlled_by="hash",
        assertion="prop_month_end_close_reconciles",
    ),
    Case(
        name="listdir_order",
        # The case brings its file system: a worker's only writable place is the sandbox's
        # tmpfs, which lists a directory in reverse creation order, so the bug (a flake on
        # ext4's hashed directories) fails on every replay the gate runs.
        root_cause="os.listdir order taken for creation order, on the sandbox's tmpfs (reverse creation order)",
        kind="control",
        controlled_by="",
        assertion="prop_statement_lists_invoices_in_order",
    ),
    Case(
        name="leaked_pool",
        root_cause="connection not returned to a fixed-size pool on the validation-error path",
        kind="state",
        controlled_by="history",
        assertion="prop_order_api_status",
    ),
    Case(
        name="mutable_default",
        root_cause="a mutable default argument: every call without a cart extends the same list",
        kind="state",
        controlled_by="history",
        assertion="prop_cart_holds_only_the_posted_lines",
    ),
    Case(
        name="spent_generator",
        root_cause="a module-level generator used up by earlier lookups: later ones never see the first brackets",
        kind="state",
        controlled_by="history",
        assertion="prop_marginal_rate_follows_the_table",
    ),
    Case(
        name="class_cache",
        root_cause="a class-level price cache keyed by SKU alone, shared by every currency's price list",
        kind="state",
        controlled_by="history",
        assertion="prop_price_is_converted_at_the_currency_rate",
    ),
    Case(
        name="lru_by_field",
        root_cause="lru_cache over a dataclass equal by one field: a heavier parcel gets a lighter one's quote",
        kind="state",
        controlled_by="history",
        assertion="prop_quote_follows_zone_and_weight",
    ),
    Case(
        name="growing_registry",
        root_cause="an event handler registered on every call: each earlier order adds another copy",
        kind="state",
        controlled_by="history",
        assertion="prop_points_are_awarded_once",
    ),
    Case(
        name="control_rounding",
        root_cause="money rounded half-down instead of half-even (deterministic control)",
        kind="control",
        controlled_by="",
        assertion="prop_vat_rounds_half_to_even",
    ),
    Case(
        name="control_boundary",
        root_cause="off-by-one in a bulk-discount quantity threshold (deterministic control)",
        kind="control",
        controlled_by="",
        assertion="prop_bulk_discount_from_ten_units",
    ),
)
