"""Month-end reconciliation: the ledger total must equal the journal total.

Closing balances (floats) are posted once per cost centre. The ledger side sums them
per cost centre iterating over a set of cost-centre names, the journal side in posting
order, and the two are compared with ==: whether they agree depends on the set's
string hash order (PYTHONHASHSEED), since float addition is not associative.
"""

from __future__ import annotations


def ledger_balances(postings: list[dict]) -> dict[str, float]:
    centres = {p["cost_centre"] for p in postings}
    balances = dict.fromkeys(centres, 0.0)  # iteration order: the set's
    for posting in postings:
        balances[posting["cost_centre"]] += posting["amount"]
    return balances


def reconcile(postings: list[dict]) -> dict:
    journal_total = sum(p["amount"] for p in postings)
    ledger_total = sum(ledger_balances(postings).values())
    return {
        "journal_total": journal_total,
        "ledger_total": ledger_total,
        "balanced": ledger_total == journal_total,  # bug: exact float equality of sums taken in different orders
    }
