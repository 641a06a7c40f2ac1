"""Seat booking served by asyncio handlers that check the seat map with a payment provider.

The provider stand-in answers after a round trip drawn from the OS's entropy (10 us to
5 ms, log-uniform, like the real one's long tail), so which handler resumes first is the
event loop's, not the test's, on any machine.
"""

from __future__ import annotations

import asyncio
import random

ROUND_TRIP_DECADES = (-5.0, -2.3)
_network = random.SystemRandom()


async def round_trip() -> None:
    await asyncio.sleep(10 ** _network.uniform(*ROUND_TRIP_DECADES))


async def load_customer(customer: str) -> dict:
    await round_trip()
    return {"id": customer}


async def authorize_payment(customer: str) -> bool:
    await round_trip()
    return True


async def book(seats: dict[str, str | None], seat: str, customer: str) -> bool:
    await load_customer(customer)
    # BUG: checks the seat before awaiting the payment provider and books it after, with no
    # lock: a customer whose check falls inside another's payment wait gets the same seat.
    if seats[seat] is not None:
        return False
    if not await authorize_payment(customer):
        return False
    seats[seat] = customer
    return True


def book_all(requests: list[tuple[str, str]]) -> tuple[dict[str, str | None], list[bool]]:
    seats: dict[str, str | None] = {seat: None for seat, _ in requests}

    async def serve() -> list[bool]:
        return list(await asyncio.gather(*(book(seats, seat, customer) for seat, customer in requests)))

    return seats, asyncio.run(serve())
