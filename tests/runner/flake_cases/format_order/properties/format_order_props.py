"""A delivery date typed as the form shows it (DD/MM/YYYY) is read as that date.

Catches `delivery_dates` trying its two layouts in a set's order: under about half of
all hash secrets every date whose day is 12 or less (and not its month) is read
month-first, whatever the date.
"""

from datetime import date

from hypothesis import strategies as st

import witness_gate
from delivery_dates import parse_delivery_date

delivery_days = st.dates(min_value=date(2026, 1, 1), max_value=date(2028, 12, 31)).map(date.isoformat)


@witness_gate.property(payloads=delivery_days)
def prop_typed_delivery_date_reads_day_first(day: str) -> bool:
    wanted = date.fromisoformat(day)
    return parse_delivery_date(wanted.strftime("%d/%m/%Y")) == wanted
