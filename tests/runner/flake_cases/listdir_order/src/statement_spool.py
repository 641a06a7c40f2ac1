"""Monthly customer statement assembled from a spool directory.

Each invoice is rendered into its own spool file (tempfile.mkstemp) and the statement
is then read back with os.listdir, assuming files come back in the order they were
written. On hashed directories (ext4, overlayfs on ext4) the order follows a hash of
the random file names, so the statement's lines are shuffled.
"""

from __future__ import annotations

import os
import shutil
import tempfile


def _spool_invoice(spool: str, invoice: dict) -> None:
    fd, _ = tempfile.mkstemp(prefix="inv-", suffix=".line", dir=spool)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"{invoice['number']};{invoice['date']};{invoice['amount_cents']}\n")


def build_statement(customer_id: str, invoices: list[dict]) -> list[str]:
    """The statement lines: a header, then one line per invoice in the order given."""
    spool = tempfile.mkdtemp(prefix="statement-")
    try:
        for invoice in invoices:
            _spool_invoice(spool, invoice)
        lines = [f"statement;{customer_id};{len(invoices)}"]
        for name in os.listdir(spool):  # bug: directory order is not creation order
            with open(os.path.join(spool, name), encoding="utf-8") as handle:
                lines.append(handle.read().rstrip("\n"))
        return lines
    finally:
        shutil.rmtree(spool, ignore_errors=True)
