"""Order API on a fixed-size database connection pool that leaks on validation errors.

`save_order` takes a connection before validating and gives it back only on the
success path, so each rejected order (HTTP 422) leaks one connection; after four
rejections every request in the process fails with 503 until it is restarted.
"""

from __future__ import annotations

import itertools

POOL_SIZE = 4


class PoolExhausted(Exception):
    pass


class ValidationError(Exception):
    pass


class Connection:
    def __init__(self, number: int, table: list[tuple]) -> None:
        self.number = number
        self._table = table

    def insert_order(self, order_id: int, customer_id: str, lines: list[dict]) -> None:
        self._table.append((order_id, customer_id, tuple((l["sku"], l["qty"]) for l in lines)))


class ConnectionPool:
    def __init__(self, size: int) -> None:
        self.orders: list[tuple] = []
        self._idle = [Connection(n, self.orders) for n in range(size)]

    def acquire(self) -> Connection:
        if not self._idle:  # production waits `pool_timeout` seconds first; the outcome is the same
            raise PoolExhausted("no idle connection")
        return self._idle.pop()

    def release(self, connection: Connection) -> None:
        self._idle.append(connection)


POOL = ConnectionPool(POOL_SIZE)
_order_ids = itertools.count(1)


def _validate(order: dict) -> None:
    if not order["lines"]:
        raise ValidationError("an order needs at least one line")
    for line in order["lines"]:
        if line["qty"] <= 0:
            raise ValidationError(f"{line['sku']}: quantity must be positive")


def save_order(order: dict) -> int:
    connection = POOL.acquire()
    _validate(order)  # bug: raises with the connection checked out; no try/finally
    order_id = next(_order_ids)
    connection.insert_order(order_id, order["customer_id"], order["lines"])
    POOL.release(connection)
    return order_id


def post_order(body: dict) -> tuple[int, dict]:
    """The HTTP handler: (status, JSON body)."""
    try:
        order_id = save_order(body)
    except ValidationError as error:
        return 422, {"error": str(error)}
    except PoolExhausted:
        return 503, {"error": "service busy, retry later"}
    return 201, {"order_id": order_id}
