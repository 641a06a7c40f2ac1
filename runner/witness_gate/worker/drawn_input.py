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
subclass of one of them included, gives no digest, and nothing is shown. The test's pytest
fixtures are left out: they are not drawn from the choices.

Which object a value is counts too, where code can tell equal values apart with `is`: a
drawn list, dict or set that the program's own state holds (`st.sampled_from` over a
module's objects) is named by every path by which the modules of the tree under test hold
it (`held_by_the_program`: module and class attributes by name, dict entries by key,
sequence items by position, functions' defaults, closures and attributes, the referents of
instances of the tree's classes); one the program does not hold was made for the case. A
module's `NO_TAGS = []` and another empty list, listed in the order of a set's iteration,
then draw as different inputs under different hash secrets (an adversarial review's case:
`tags is NO_TAGS` failed under half of them and was a `flake` to freeze). The worker reads
those paths once, before it forks its replays, so a replay pays a lookup and its memory is
not disturbed before the call; past `_STATE_BUDGET` objects of state a drawn list, dict or
set gives no digest. Not seen: an object the program tells apart by its `id()` alone or
holds only where the walk does not go (a C type's innards, a module outside the tree),
and equal strings or numbers told apart with `is`.
"""

from __future__ import annotations

import datetime
import fractions
import gc
import os
import struct
import types
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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
_TEXT = frozenset({str})
_MODULE = frozenset({types.ModuleType})
_SETS: dict[type, str] = {set: "set", frozenset: "frozenset"}
# The values whose identity code can use as a sentinel's (mutable: each made apart from every other).
_MUTABLE = frozenset({list, dict, set})
# Values that hold nothing the walk looks for: it does not count them.
_LEAVES = frozenset({type(None), bool, int, float, complex, str, bytes})
# The most objects of the program's state walked to name drawn objects: a walk cut short
# could miss one, so past it no digest is given.
_STATE_BUDGET = 50_000


@dataclass(frozen=True)
class ProgramState:
    """Where the walk that names drawn objects starts: the tree under test (a real path
    ending in a separator) and its modules by name, the test module's namespace among them."""

    tree: str
    roots: Sequence[tuple[str, Any]]


class _NotPlain(Exception):
    pass


# A path the walk took: the path to the holder and the step from it, built only as text for
# the paths that reach a drawn object (`_text`). A step: (".", name), ("[", position) or
# ("key", key, position) for a dict entry.
_Path = tuple[Any, tuple[Any, ...]]

# Where the program holds each list, dict and set its state holds, by id (`held_by_the_program`);
# None where its state was too large to walk.
Held = Mapping[int, list[_Path]] | None
NOTHING_HELD: Held = types.MappingProxyType({})


def digest(arguments: Mapping[str, Any], fixtures: frozenset[str], held: Held = NOTHING_HELD) -> str | None:
    """The digest of the drawn `arguments` (a case's keyword arguments but the `fixtures`), or
    None where any of them is not a plain value (see above) or none was drawn. A drawn list,
    dict or set the program holds (`held`) is named by where it holds it; with `held` None,
    one drawn gives no digest."""
    drawn = {name: value for name, value in arguments.items() if name not in fixtures}
    if not drawn:
        return None
    try:
        mutable = [part for value in drawn.values() for part in _parts(value) if type(part) in _MUTABLE]
        if mutable and held is None:
            return None
        named = [part for part in mutable if held and id(part) in held]
        names = {id(part): " ".join(sorted(_text(path) for path in held[id(part)])) for part in named}  # type: ignore[index]
        return input_digest(_encoded(drawn, names))
    except (_NotPlain, RecursionError, ValueError):  # ValueError: a Decimal or Fraction too long to print
        return None


def _parts(value: Any) -> Iterator[Any]:
    """`value` and every value inside it, through the plain containers `_encoded` reads."""
    yield value
    kind = type(value)
    if kind in _SEQUENCES or kind in _SETS:
        for item in value:
            yield from _parts(item)
    elif kind is dict:
        for key, item in value.items():
            yield from _parts(key)
            yield from _parts(item)


def held_by_the_program(program: ProgramState) -> Held:
    """Every path by which the program's state holds each list, dict and set in it, by id:
    every object the walk reaches (breadth first, in a fixed order, each once, by the first
    path to it) adds its own path and the step to each one it holds. None past
    `_STATE_BUDGET` objects. Made once in an interpreter, before it forks replays: a forked
    child finds the objects it inherited at the same ids, and a drawn object made in the
    case is none of them while they live."""
    walk = _Walk(program.tree)
    queue: deque[tuple[_Path | None, Any]] = deque(((None, (".", name)), root) for name, root in program.roots)
    seen: set[int] = set()  # every object seen is held by the program's state throughout: no id is reused
    held: dict[int, list[_Path]] = {}
    while queue:
        path, value = queue.popleft()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > _STATE_BUDGET:
            return None
        for step, child in walk.held_by(value):
            if type(child) in _MUTABLE:
                held.setdefault(id(child), []).append((path, step))
            if id(child) not in seen:
                queue.append(((path, step), child))
    return held


def _text(path: _Path | None) -> str:
    steps = []
    while path is not None:
        path, step = path
        if step[0] == "key":
            steps.append(f"[{_key_step(step[1], step[2])}]")
        else:
            steps.append(f"[{step[1]}]" if step[0] == "[" else f".{step[1]}")
    return "".join(reversed(steps))


class _Walk:
    """What the walk goes on to from an object: only what reading runs no code of the
    program's, and only the tree's own modules, classes and functions; never a value that
    holds nothing (`_LEAVES`)."""

    def __init__(self, tree: str) -> None:
        self._tree = tree
        self._modules: set[str] = set()  # the names of the tree's modules met so far

    def held_by(self, value: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
        """Each object `value` holds that the walk goes on to, with the step that names it: a
        module's and a class's attributes by name, dict entries by key, sequence items by
        position, a function's defaults, closure and attributes, an instance's referents."""
        kind = type(value)
        if kind is dict:
            for index, (key, item) in enumerate(value.items()):
                if type(item) not in _LEAVES:
                    yield ("key", key, index), item
        elif kind in _SEQUENCES:
            for index, item in enumerate(value):
                if type(item) not in _LEAVES:
                    yield ("[", index), item
        elif kind is types.ModuleType:
            if self._in_tree(value.__dict__.get("__file__")):
                name = value.__dict__.get("__name__")
                if is_text(name):
                    self._modules.add(name)
                yield from _by_name(value.__dict__)
        elif kind is types.FunctionType:
            if self._in_tree(value.__code__.co_filename):
                yield from _with_leaves_left_out(
                    [
                        *(
                            (("[", f"__defaults__ {index}"), item)
                            for index, item in enumerate(value.__defaults__ or ())
                        ),
                        *(
                            (("[", f"__kwdefaults__ {step[1]}"), item)
                            for step, item in _by_name(value.__kwdefaults__ or {})
                        ),
                        *((("[", f"closure {index}"), item) for index, item in enumerate(_cells(value))),
                        *_by_name(value.__dict__),
                    ]
                )
        elif issubclass(kind, type):  # a class: its own namespace, read past any metaclass
            if self._of_the_tree(value):
                yield from _by_name(_CLASS_NAMESPACE.__get__(value))
        elif self._of_the_tree(kind):
            held = [item for item in gc.get_referents(value) if item is not kind]
            yield from _with_leaves_left_out([(("[", f"referent {index}"), item) for index, item in enumerate(held)])

    def _in_tree(self, path: Any) -> bool:
        return in_tree(path, self._tree)

    def _of_the_tree(self, kind: type) -> bool:
        """Whether a class was defined in a module of the tree met so far (its own namespace says which)."""
        module = _CLASS_NAMESPACE.__get__(kind).get("__module__")
        return is_text(module) and module in self._modules


# A class's own namespace, read by type's descriptor: `cls.__dict__` would ask its metaclass.
_CLASS_NAMESPACE = type.__dict__["__dict__"]


def _cells(function: types.FunctionType) -> list[Any]:
    """What a function's closure holds (an empty cell left out)."""
    held = []
    for cell in function.__closure__ or ():
        try:
            held.append(cell.cell_contents)
        except ValueError:
            continue
    return held


def _by_name(namespace: Mapping[Any, Any]) -> list[tuple[tuple[Any, ...], Any]]:
    named = [(name, item) for name, item in namespace.items() if is_text(name) and type(item) not in _LEAVES]
    return [((".", name), item) for name, item in sorted(named, key=lambda pair: pair[0])]


def is_text(value: Any) -> bool:
    """Whether `value` is a str itself: a subclass could run code when hashed, compared or printed."""
    return type(value) in _TEXT


def modules_in_tree(modules: Mapping[Any, Any], tree: str) -> list[tuple[str, types.ModuleType]]:
    """The loaded modules (`sys.modules`) whose files lie in the tree, by name."""
    found = [
        (name, module)
        for name, module in list(modules.items())
        if is_text(name) and type(module) in _MODULE and in_tree(module.__dict__.get("__file__"), tree)
    ]
    return sorted(found, key=lambda pair: pair[0])


def in_tree(path: Any, tree: str) -> bool:
    """Whether a module's or a function's file (`path`, as it says) lies in the tree under test."""
    return is_text(path) and os.path.realpath(path).startswith(tree)


def _with_leaves_left_out(steps: list[tuple[tuple[Any, ...], Any]]) -> list[tuple[tuple[Any, ...], Any]]:
    return [(step, item) for step, item in steps if type(item) not in _LEAVES]


def _key_step(key: Any, index: int) -> str:
    try:
        return _encoded(key, {})
    except _NotPlain:
        return f"#{index}"


def _encoded(value: Any, held: Mapping[int, str]) -> str:
    """The value's encoding, a list, dict or set the program holds prefixed with its path (`held`)."""
    text = _plain(value, held)
    name = held.get(id(value)) if type(value) in _MUTABLE else None
    return text if name is None else f"{name}@{text}"


def _plain(value: Any, held: Mapping[int, str]) -> str:
    kind = type(value)
    if kind in _CLOCKS and value.tzinfo is not None and type(value.tzinfo) is not datetime.timezone:
        raise _NotPlain  # a time zone class of anyone's, whose repr could leave out the offset
    if kind in _BITS:
        return f"{kind.__name__}:{_BITS[kind](value)}"
    if kind in _SCALARS or kind in _CLOCKS:
        return f"{kind.__name__}:{value!r}"
    if kind in _SEQUENCES:
        return f"{_SEQUENCES[kind]}[{','.join(_encoded(item, held) for item in value)}]"
    if kind in _SETS:
        return f"{_SETS[kind]}{{{','.join(sorted(_encoded(item, held) for item in value))}}}"
    if kind is dict:
        return "dict{" + ",".join(f"{_encoded(key, held)}:{_encoded(item, held)}" for key, item in value.items()) + "}"
    raise _NotPlain
