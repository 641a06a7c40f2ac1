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
of two equal strings or numbers a value is. The test's other arguments count as its input
too (a parameter, a fixture of its module's), but pytest's own fixtures (`tmp_path`): what
pytest sets up is not chosen by the program.
"""

from __future__ import annotations

import datetime
import fractions
import gc
import struct
import sys
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
    """One replayed case's draw, watched from the moment Hypothesis fetches the witness's
    choices (its strategies validated, the test's fixtures set up) until the digest is taken,
    right before the body. A list, tuple, dict or set the draw made came into being in that
    time: one the collector tracks was not among its objects at the start (`gc`, whose frozen
    objects, the module's among them, were made before; those at the start are held until
    the watch ends, so no new object takes the address of one), one it does not (a dict of
    plain values) was allocated while `tracemalloc` traced; and none of the program's code ran in
    that time (`program`: the code under test, its helpers; `sys.setprofile`). A container
    the program already held (its module's default list, a list built in a set's order to
    sample from), or one its code made while the case was drawn (a registry built on first
    use, behind a `.map`), may be one of two equal ones it tells apart with `is`: which cannot
    be seen, so it is not shown. Nor is anything where tracing or a profiler of someone
    else's was on, or `enabled` is off (a program that traces allocations itself, whose
    tracing a watch would end). An untracked one CPython took from its free list of objects
    freed before reads as held: never the other way round."""

    def __init__(self, program: Callable[[str], bool], enabled: bool) -> None:
        self._program = program  # by a code object's file name
        self._seen: dict[Any, bool] = {}
        self._enabled = enabled
        self._watching = self._program_ran = False
        self._before: list[Any] = []  # held, so that none of their addresses is a new object's
        self._since: set[int] | None = None

    def start(self) -> None:
        self._watching = self._enabled and not tracemalloc.is_tracing() and sys.getprofile() is None
        if self._watching:
            self._before = gc.get_objects()
            sys.setprofile(self._profile)
            tracemalloc.start(1)

    def _profile(self, frame: Any, event: str, _: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code not in self._seen:
            self._seen[code] = self._program(code.co_filename)
        if self._seen[code]:
            self._program_ran = True
            sys.setprofile(None)  # seen: nothing more to learn

    def made_by_the_draw(self, value: Any) -> bool:
        if not self._watching or self._program_ran or not tracemalloc.is_tracing():
            return False
        if gc.is_tracked(value):
            if self._since is None:
                self._since = {id(thing) for thing in gc.get_objects()} - {id(thing) for thing in self._before}
            return id(value) in self._since
        return tracemalloc.get_object_traceback(value) is not None

    def stop(self) -> None:
        """Ends the watch before the test's body runs, at its own speed."""
        if self._watching:
            if sys.getprofile() == self._profile:
                sys.setprofile(None)
            if tracemalloc.is_tracing():
                tracemalloc.stop()
        self._watching = False
        self._before, self._since = [], None


def traces_allocations(namespace: Mapping[str, Any]) -> bool:
    """Whether a module's namespace holds `tracemalloc` or one of its functions: a program
    that traces allocations itself, whose tracing a watch would end."""
    ours = {id(tracemalloc), *(id(value) for value in vars(tracemalloc).values() if callable(value))}
    return any(id(value) in ours for value in namespace.values())


def digest(
    arguments: Mapping[str, Any], fixtures: frozenset[str], made_by_the_draw: Callable[[Any], bool]
) -> str | None:
    """The digest of a case's `arguments` (its keyword arguments but the `fixtures` left out), or
    None where any of them is not a plain value (see above), holds a container the draw did
    not make (`made_by_the_draw`), or none was drawn."""
    drawn = {name: value for name, value in arguments.items() if name not in fixtures}
    if not drawn:
        return None
    try:
        return input_digest(_encoded_items(drawn, made_by_the_draw))  # the arguments' own dict is not the draw's
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
        return _encoded_items(value, made_by_the_draw)
    raise _NotPlain


def _encoded_items(mapping: Mapping[Any, Any], made_by_the_draw: Callable[[Any], bool]) -> str:
    return (
        "dict{"
        + ",".join(
            f"{_encoded(key, made_by_the_draw)}:{_encoded(item, made_by_the_draw)}" for key, item in mapping.items()
        )
        + "}"
    )
