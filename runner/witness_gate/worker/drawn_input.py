"""What a replayed `@given` case drew, as a digest the runner can compare across replays.

The same choice sequence can draw another input under another hash secret, process or
directory order, where a strategy reads one (`st.sampled_from(list(a_set))` picks by
position in the set's iteration order): a bug on one element of a set then passes under the
secrets that drew another, and counted as one input that is a `flake` to freeze. The
runner lets a test's replays that differ in outcome make a flake only where every one of
them drew the same input (`evidence.one_input`), and that takes an encoding that cannot say
"the same" of two different inputs. Printed forms can: a closure prints by its function's
name, an object by a `__repr__` of the implementation's that leaves out what the bug reads,
`st.data()` and `st.functions()` by what they will draw later (adversarial reviews). So
only plain values are encoded, by their exact built-in type, each by its own value: None,
bools, numbers, strings, bytes, dates and times without a time zone or in a fixed offset,
and lists, tuples, dicts (in their order) and sets (sorted) of them. Any other value, a
subclass of one of them included, gives no digest, and nothing is shown. Nor does a list,
tuple, dict or set the draw did not make (`DrawWatch`): two equal lists the implementation
tells apart with `is` (its "not given" default and an empty one, sampled in a set's order)
encode alike, and only one the draw made cannot be the program's own. Still not seen: which
of two equal strings or numbers a value is. The test's pytest fixtures are left out: they
are not drawn from the choices.
"""

from __future__ import annotations

import datetime
import fractions
import struct
import tracemalloc
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from witness_gate.protocol import input_digest

# Each shown by repr(), which for these exact types is the value and nothing else.
_SCALARS = frozenset(
    {
        type(None),
        bool,
        str,
        bytes,
        Decimal,
        fractions.Fraction,
        uuid.UUID,
        datetime.date,
        datetime.timedelta,
    }
)
_CLOCKS = frozenset({datetime.datetime, datetime.time})  # a repr that shows their tzinfo's
# Ints in hexadecimal (repr refuses past 4,300 digits), floats and complex numbers by their
# bits (repr shows every NaN as `nan`, whatever its sign: an adversarial review's two inputs
# with one digest).
_BITS: dict[type, Callable[[Any], str]] = {
    int: lambda value: f"{value:x}",
    float: lambda value: struct.pack(">d", value).hex(),
    complex: lambda value: struct.pack(">dd", value.real, value.imag).hex(),
}
_SEQUENCES: dict[type, str] = {list: "list", tuple: "tuple"}
_SETS: dict[type, str] = {set: "set", frozenset: "frozenset"}


class _NotPlain(Exception):
    pass


class DrawWatch:
    """The allocations of one replayed case's run, from before Hypothesis draws it until its
    digest is taken: a container the draw made was allocated in that time; one the program
    already held (a module's default list, a list built in a set's order to sample from) was
    not, and which of two equal ones it is cannot be seen, so it is not shown. Tracing that
    someone else started (the code under test) shows nothing either."""

    def __enter__(self) -> DrawWatch:
        self._ours = not tracemalloc.is_tracing()
        if self._ours:
            tracemalloc.start(1)
        return self

    def made_by_the_draw(self, value: Any) -> bool:
        return self._ours and tracemalloc.is_tracing() and tracemalloc.get_object_traceback(value) is not None

    def stop(self) -> None:
        """Ends the tracing before the test's body runs, at its own speed."""
        if self._ours and tracemalloc.is_tracing():
            tracemalloc.stop()
        self._ours = False

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def digest(
    arguments: Mapping[str, Any], fixtures: frozenset[str], made_by_the_draw: Callable[[Any], bool]
) -> str | None:
    """The digest of the drawn `arguments` (a case's keyword arguments but the `fixtures`), or
    None where any of them is not a plain value (see above), holds a container the draw did
    not make (`made_by_the_draw`), or none was drawn."""
    drawn = {name: value for name, value in arguments.items() if name not in fixtures}
    if not drawn:
        return None
    try:
        return input_digest(_encoded(drawn, made_by_the_draw))
    except (_NotPlain, RecursionError, ValueError):  # ValueError: a Decimal or Fraction too long to print
        return None


def _encoded(value: Any, made_by_the_draw: Callable[[Any], bool]) -> str:
    kind = type(value)
    if kind in _CLOCKS and value.tzinfo is not None and type(value.tzinfo) is not datetime.timezone:
        raise _NotPlain  # a time zone class of anyone's, whose repr could leave out the offset
    if kind in _BITS:
        return f"{kind.__name__}:{_BITS[kind](value)}"
    if kind in _SCALARS or kind in _CLOCKS:
        return f"{kind.__name__}:{value!r}"
    if kind in _SEQUENCES or kind in _SETS or kind is dict:
        if value != () and not made_by_the_draw(value):  # () is the one empty tuple there is
            raise _NotPlain  # one the program held before: which of two equal ones is not seen
    if kind in _SEQUENCES:
        return f"{_SEQUENCES[kind]}[{','.join(_encoded(item, made_by_the_draw) for item in value)}]"
    if kind in _SETS:
        return f"{_SETS[kind]}{{{','.join(sorted(_encoded(item, made_by_the_draw) for item in value))}}}"
    if kind is dict:
        return (
            "dict{"
            + ",".join(
                f"{_encoded(key, made_by_the_draw)}:{_encoded(item, made_by_the_draw)}" for key, item in value.items()
            )
            + "}"
        )
    raise _NotPlain
