"""Invoice lines keyed by random ids; the renderer prints them sorted by id.

Line ids used to be a zero-padded per-invoice sequence (L0001, L0002, ...) and the
renderer sorts by id to get cart order. The ids were switched to `uuid.uuid4()` for
global uniqueness, so the printed line order is now random.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class InvoiceLine:
    line_id: str
    sku: str
    qty: int
    unit_cents: int

    @property
    def amount_cents(self) -> int:
        return self.qty * self.unit_cents


@dataclass
class Invoice:
    number: str
    lines: dict[str, InvoiceLine] = field(default_factory=dict)

    def add_line(self, sku: str, qty: int, unit_cents: int) -> str:
        line_id = uuid.uuid4().hex  # was f"L{len(self.lines) + 1:04d}"
        self.lines[line_id] = InvoiceLine(line_id, sku, qty, unit_cents)
        return line_id

    def render_rows(self) -> list[str]:
        # Ids sort in the order the lines were added (they used to be a sequence).
        ordered = sorted(self.lines.values(), key=lambda line: line.line_id)
        return [f"{line.sku} x{line.qty} @ {line.unit_cents} = {line.amount_cents}" for line in ordered]


def invoice_from_cart(number: str, cart_lines: list[dict]) -> Invoice:
    invoice = Invoice(number)
    for line in cart_lines:
        invoice.add_line(line["sku"], line["qty"], line["unit_cents"])
    return invoice
