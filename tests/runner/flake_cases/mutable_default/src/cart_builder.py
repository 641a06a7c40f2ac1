"""Carts built from the lines a checkout form posts.

`build_cart` takes an optional cart to extend, defaulting to an empty list; the default is
evaluated once, when the function is defined, so every call without a cart extends the
same list, and a customer's cart holds the lines of every earlier request.
"""

from __future__ import annotations


def build_cart(lines: list[dict], cart: list[dict] = []) -> list[dict]:  # noqa: B006 (the bug)
    for line in lines:
        if line["qty"] > 0:
            cart.append({"sku": line["sku"], "qty": line["qty"]})
    return cart
