"""A statement lists the customer's invoices in the order they were issued.

Catches `statement_spool` reading its spool directory with os.listdir: on a hashed
directory (ext4) two spooled invoices come back swapped on about half the calls,
because mkstemp's names are random.
"""

from hypothesis import strategies as st

import witness_gate
from statement_spool import build_statement

_invoices = st.lists(
    st.fixed_dictionaries(
        {
            "number": st.sampled_from(["INV-0001", "INV-0002", "INV-0003", "INV-0004"]),
            "date": st.sampled_from(["2024-03-01", "2024-03-15"]),
            "amount_cents": st.integers(min_value=1, max_value=99_999),
        }
    ),
    # Two invoices: n files come back in creation order with probability 1/n!, so a
    # longer statement would fail on nearly every call instead of about half of them.
    max_size=2,
)
statements = st.fixed_dictionaries({"customer_id": st.sampled_from(["c1", "c2"]), "invoices": _invoices})


@witness_gate.property(
    payloads=statements,
    examples=[{"customer_id": "c1", "invoices": [{"number": "INV-0001", "date": "2024-03-01", "amount_cents": 1_250}]}],
)
def prop_statement_lists_invoices_in_order(statement: dict) -> bool:
    lines = build_statement(statement["customer_id"], statement["invoices"])
    expected = [f"statement;{statement['customer_id']};{len(statement['invoices'])}"]
    expected += [f"{i['number']};{i['date']};{i['amount_cents']}" for i in statement["invoices"]]
    return lines == expected
