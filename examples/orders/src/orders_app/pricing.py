"""The implementation under test: order totals."""


def line_total(line: dict) -> int:
    return line["qty"] * line["price"]


def order_total(order: dict) -> int:
    return sum(line_total(line) for line in order["lines"])
