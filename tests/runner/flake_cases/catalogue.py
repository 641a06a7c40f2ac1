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
    cause: str  # the cause the report must name (witness_gate.evidence.CAUSES), in every run
    assertion: str  # the property function name
    race: bool = False  # a race between threads: also run on one core and with every core busy


CASES = (
    Case(
        name="random_choice",
        root_cause="unseeded global random: A/B variant drawn per request with random.choice, one variant misapplies coupons",
        kind="nondeterministic",
        cause="random_seed",
        assertion="prop_checkout_total_ignores_ab_bucket",
    ),
    Case(
        name="uuid_ids",
        root_cause="uuid4 line ids sorted as if they were a creation-ordered sequence",
        kind="nondeterministic",
        cause="none_found",
        assertion="prop_invoice_rows_follow_cart_order",
    ),
    Case(
        name="hash_order",
        root_cause="iteration order of a set of strings (PYTHONHASHSEED) picks the discounted product",
        kind="nondeterministic",
        cause="hash_secret",
        assertion="prop_welcome_discount_on_first_added_sku",
    ),
    Case(
        name="format_order",
        root_cause="two date layouts tried in a set's order (PYTHONHASHSEED): under half of all secrets every ambiguous date is read month-first, whatever the input",
        kind="nondeterministic",
        cause="hash_secret",
        assertion="prop_typed_delivery_date_reads_day_first",
    ),
    Case(
        name="time_window",
        root_cause="wall clock: token iat rounded at issue, truncated at verification, refused in the second half of each second",
        kind="nondeterministic",
        cause="time",
        assertion="prop_fresh_login_tokens_verify",
    ),
    Case(
        name="thread_race",
        root_cause="unlocked read-modify-write of a shared dict by thread-pool workers (lost update)",
        kind="nondeterministic",
        cause="none_found",
        assertion="prop_tax_summary_adds_up",
        race=True,
    ),
    Case(
        name="memo_previous",
        root_cause="last-result memo keyed by customer id only, ignoring the cart",
        kind="state",
        cause="history",
        assertion="prop_quote_prices_requested_cart",
    ),
    Case(
        name="id_cache",
        root_cause="memo keyed by id(row): a freed order row's memory is reused by the next row",
        kind="state",
        cause="history",
        assertion="prop_checkout_total_of_loaded_order",
    ),
    Case(
        name="float_set_order",
        root_cause="float sum in set (string hash) order compared with == against a sum in posting order",
        kind="nondeterministic",
        cause="hash_secret",
        assertion="prop_month_end_close_reconciles",
    ),
    Case(
        name="listdir_order",
        # The case brings its file system: a worker's only writable place is the sandbox's
        # tmpfs, which lists a directory in reverse creation order, so the search and every
        # ordinary replay fail; the directory-order probe lists it reversed and in orders the
        # schedule draws, and its outcomes split by order, as they would on ext4's hashed
        # directories.
        root_cause="os.listdir order taken for creation order (file systems promise none)",
        kind="nondeterministic",
        cause="directory_order",
        assertion="prop_statement_lists_invoices_in_order",
    ),
    Case(
        name="newest_first",
        # Passes where the workers write (the sandbox's tmpfs lists new files first): only the
        # search's legs, which list directories reversed or in orders the schedule draws, meet
        # it; the directory-order probe's outcomes then split by order.
        root_cause="the first name os.listdir gives taken for the newest file (one file system's order, not a promise)",
        kind="nondeterministic",
        cause="directory_order",
        assertion="prop_latest_upload_is_the_last_sent",
    ),
    Case(
        name="plan_cache",
        # State that lives as long as a directory lists the same way: the directory-order
        # probe must list it the same way in the history and in the witness's call, as a
        # file system does, or a call that found the cache stale would look like an order bug
        # (a `flake` to freeze, once).
        root_cause="a cached plan limit narrowed in place by one order's promotion: later orders keep the cap",
        kind="state",
        cause="history",
        assertion="prop_an_order_gets_its_plan_s_limit_or_its_promotion_s",
    ),
    Case(
        name="leaked_pool",
        root_cause="connection not returned to a fixed-size pool on the validation-error path",
        kind="state",
        cause="history",
        assertion="prop_order_api_status",
    ),
    Case(
        name="mutable_default",
        root_cause="a mutable default argument: every call without a cart extends the same list",
        kind="state",
        cause="history",
        assertion="prop_cart_holds_only_the_posted_lines",
    ),
    Case(
        name="spent_generator",
        root_cause="a module-level generator used up by earlier lookups: later ones never see the first brackets",
        kind="state",
        cause="history",
        assertion="prop_marginal_rate_follows_the_table",
    ),
    Case(
        name="class_cache",
        root_cause="a class-level price cache keyed by SKU alone, shared by every currency's price list",
        kind="state",
        cause="history",
        assertion="prop_price_is_converted_at_the_currency_rate",
    ),
    Case(
        name="lru_by_field",
        root_cause="lru_cache over a dataclass equal by one field: a heavier parcel gets a lighter one's quote",
        kind="state",
        cause="history",
        assertion="prop_quote_follows_zone_and_weight",
    ),
    Case(
        name="growing_registry",
        root_cause="an event handler registered on every call: each earlier order adds another copy",
        kind="state",
        cause="history",
        assertion="prop_points_are_awarded_once",
    ),
    Case(
        name="gc_finalizer",
        root_cause="a weakref.finalize that gives an abandoned cart's stock back also fires for a checked-out cart the cyclic collector reclaims",
        kind="nondeterministic",
        cause="gc",
        assertion="prop_stock_on_offer_is_shelf_minus_sold",
    ),
    Case(
        name="completion_order",
        root_cause="warehouse answers taken in as_completed order: the first to arrive ships, not the cheapest that can",
        kind="nondeterministic",
        cause="none_found",
        assertion="prop_ships_from_the_cheapest_warehouse_that_holds_it",
        race=True,
    ),
    Case(
        name="wrapping_counter",
        root_cause="ticket references keep the counter's last three digits: after 999 tickets in a process they collide",
        kind="state",
        cause="history",
        assertion="prop_a_batch_gets_increasing_references",
    ),
    Case(
        name="polluted_context",
        root_cause="one property's code sets the thread's Decimal precision to six digits: the next property's interest is rounded",
        kind="state",
        cause="history",
        assertion="prop_interest_is_exact_to_the_cent",
    ),
    Case(
        name="hash_sharding",
        root_cause="sessions sharded by hash(key) % 4 (salted per interpreter), and the migration forgets the last shard",
        kind="nondeterministic",
        cause="hash_secret",
        assertion="prop_sessions_survive_migration",
    ),
    Case(
        name="retry_jitter",
        root_cause="backoff with full jitter from the global random: the deadline is checked on the ceilings, not the waits drawn",
        kind="nondeterministic",
        cause="random_seed",
        assertion="prop_retries_end_within_the_deadline",
    ),
    Case(
        name="temp_names",
        root_cause="exports numbered in the order of their temporary file names (random letters) instead of their titles",
        kind="nondeterministic",
        cause="none_found",
        assertion="prop_exports_are_numbered_in_title_order",
    ),
    Case(
        name="async_interleaving",
        root_cause="an asyncio handler checks a seat, awaits the payment provider, then books it: two customers get one seat",
        kind="nondeterministic",
        cause="none_found",
        assertion="prop_a_seat_is_promised_once",
        race=True,
    ),
    # Each worker loads the module at a process id the schedule chose (with every worker pid 1
    # of its namespace, this was regression 150/150), and a round replays each hash secret at
    # two process ids: the process id takes the blame, never the secrets that changed with it.
    Case(
        name="pid_seed",
        root_cause="a carrier sampler seeded with os.getpid(): each worker process packs parcels under other limits",
        kind="nondeterministic",
        cause="process",
        assertion="prop_a_new_parcel_only_when_the_item_does_not_fit",
    ),
    # Identity order: the worker's forked replays start from one memory layout per process,
    # drawn from the schedule (witness_gate.layout), so objects hashed or sorted by identity
    # keep their order within a process and change it from one to the next.
    Case(
        name="identity_set",
        root_cause="a set of parcel objects hashed by identity: the merged shipment's lead parcel is whichever the set yields first",
        kind="nondeterministic",
        cause="process",
        assertion="prop_the_first_parcel_scanned_leads",
    ),
    Case(
        name="id_sorted",
        root_cause="print jobs of equal priority ordered by id(job), taken for a creation counter",
        kind="nondeterministic",
        cause="process",
        assertion="prop_a_tie_runs_in_submission_order",
    ),
    Case(
        name="zone_override",
        # A deterministic bug behind a table the module reads at load, and reads again when the
        # directory's entries list otherwise: the directory-order probe's children must list an
        # unchanged directory as the load did, as a file system does, or the reload hides the
        # bug under every other order (a `flake` to freeze, once).
        root_cause="a zone's fee patched into a table read at load (deterministic control)",
        kind="control",
        cause="deterministic",
        assertion="prop_each_parcel_pays_its_zone_s_fee",
    ),
    Case(
        name="control_rounding",
        root_cause="money rounded half-down instead of half-even (deterministic control)",
        kind="control",
        cause="deterministic",
        assertion="prop_vat_rounds_half_to_even",
    ),
    Case(
        name="control_boundary",
        root_cause="off-by-one in a bulk-discount quantity threshold (deterministic control)",
        kind="control",
        cause="deterministic",
        assertion="prop_bulk_discount_from_ten_units",
    ),
)
