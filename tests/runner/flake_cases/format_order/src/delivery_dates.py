"""Reads the delivery date a customer types into the order form (shown as DD/MM/YYYY).

The form accepts a second, month-first layout for customers who paste US dates. The two
layouts are kept in a set, and a date both can read (03/04/2027) is read by whichever the
set lists first: that order follows the string hash secret (PYTHONHASHSEED) of the
process, not the input, so one interpreter reads every such date right and the next
reads every one of them wrong.
"""

from __future__ import annotations

from datetime import date, datetime

ACCEPTED_LAYOUTS = {"%d/%m/%Y", "%m/%d/%Y"}  # bug: a set has no "first"; day-first must win


def parse_delivery_date(text: str) -> date:
    for layout in ACCEPTED_LAYOUTS:
        try:
            return datetime.strptime(text, layout).date()
        except ValueError:
            continue
    raise ValueError(f"not a delivery date: {text!r}")
