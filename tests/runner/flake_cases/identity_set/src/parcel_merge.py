"""Merging a customer's parcels that go to one address into a single shipment.

Parcels are slotted records compared by identity (eq=False: one physical parcel is one
object), collected into a set to drop the duplicates the warehouse scanner reports; the
shipment's lead parcel, which carries the label and pays the base fee, is the first one
the set yields.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False, slots=True)
class Parcel:
    parcel_id: str
    grams: int


def merge(scanned: list[Parcel]) -> list[Parcel]:
    """The shipment's parcels, lead first: the first parcel scanned leads."""
    unique = set(scanned)  # bug: iteration order of identity-hashed objects is memory order, not scan order
    return list(unique)


def shipment(scans: list[dict]) -> list[Parcel]:
    seen: dict[str, Parcel] = {}
    for scan in scans:  # the scanner reports a parcel again on every pass
        seen.setdefault(scan["parcel_id"], Parcel(scan["parcel_id"], scan["grams"]))
    return merge([seen[scan["parcel_id"]] for scan in scans])
