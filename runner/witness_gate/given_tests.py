"""Hypothesis tests a team already has: a pytest module's `@given` tests and state machines,
read from its source.

A property module that imports nothing from `witness_gate` is a pytest module: the worker
has pytest collect it and runs its tests (`worker.pytest_module`). Each Hypothesis test it
searches is an assertion named by its node id: a `@given` test, and a stateful test (a
`RuleBasedStateMachine`'s `TestCase`, e.g. `TestCart = Cart.TestCase`, or a test function
that calls `run_state_machine_as_test` itself). Any other test is a plain test: it runs once,
and blocks the verdict if it fails (it is no witness: nothing replays it). What the runner
knows of such a module before any code of it runs is read here, from its source alone
(pure): which tests it declares, which it exempts, and so which a check must have searched.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass


def is_pytest_module(source: bytes) -> bool:
    """Whether a property module is pytest's: it imports nothing from `witness_gate` (a
    module that does not parse is left to the property import, which names the error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "witness_gate" for alias in node.names):
            return False
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "witness_gate":
            return False
    return True


@dataclass(frozen=True)
class DeclaredTest:
    """A test function as the module's source declares it."""

    given: bool  # decorated with `@given`, under any name the module imports it as
    exempt: bool  # marked skip or xfail unconditionally by the module (on it, its class or `pytestmark`)
    own_max_examples: bool  # its `@settings(...)`, or its class's, sets `max_examples`
    stateful: bool = False  # a state machine's `TestCase`, or a function that calls `run_state_machine_as_test`
    line: int = 0  # where the module declares it (a `TestCase`'s own code is Hypothesis')
    marked: bool = False  # carries a skip, skipif or xfail mark in the source, conditional or not (`exempt` or not)

    @property
    def searched(self) -> bool:
        """Whether the gate searches it (an assertion), rather than running it once."""
        return self.given or self.stateful


def declared_tests(source: bytes) -> dict[str, DeclaredTest]:
    """The test functions of a pytest module by `function_key` (`test` or `Class::test`),
    collected the way pytest does by default (functions named `test*` at the top level and
    in classes named `Test*`) and each state machine's `TestCase` bound to a name of the module
    (`TestX = Machine.TestCase`, or a class deriving from it: `TestX::runTest`, which pytest
    collects under any name), read from the source alone (pure): nothing the code under test
    or a conftest does at run time can add a test here or a mark to it. A machine counts when
    the module defines it (a class deriving from `RuleBasedStateMachine`, or from such a class
    of the module); the `TestCase` of one imported from elsewhere is searched all the same
    (the worker knows it by Hypothesis' own mark) but not declared here."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    givens = _names_of(tree, "hypothesis", "given")
    module_marks = [
        mark
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        for mark in (node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value])
    ]
    module_marked = _marked(module_marks)
    scopes: list[tuple[str, list[ast.stmt], list[ast.expr]]] = [("", tree.body, [])]
    scopes += [
        (f"{node.name}::", node.body, node.decorator_list)
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test")
    ]
    found = {}
    for prefix, body, outer in scopes:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                found[prefix + node.name] = DeclaredTest(
                    given=any(_called_name(decorator) in givens for decorator in node.decorator_list),
                    exempt=module_marked or _marked([*outer, *node.decorator_list]),
                    own_max_examples=_sets_max_examples([*outer, *node.decorator_list]),
                    stateful=_runs_a_state_machine(node),
                    line=node.lineno,
                    marked=_marked([*module_marks, *outer, *node.decorator_list], conditional=True),
                )
    machines = _state_machines(tree)
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_test_case_of(node.value, machines):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[f"{target.id}::runTest"] = DeclaredTest(
                        False, module_marked, False, stateful=True, line=node.lineno
                    )
        elif isinstance(node, ast.ClassDef) and any(_is_test_case_of(base, machines) for base in node.bases):
            found[f"{node.name}::runTest"] = DeclaredTest(
                False, module_marked or _marked(node.decorator_list), False, stateful=True, line=node.lineno
            )
    return found


def _names_of(tree: ast.Module, module: str, name: str) -> set[str]:
    """`name`, and every name the module imports it from `module` as (`from module import name as other`)."""
    return {name} | {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
        if alias.name == name and alias.asname
    }


def _state_machines(tree: ast.Module) -> set[str]:
    """The module's classes that are state machines: deriving from `RuleBasedStateMachine`
    (as a name, under any name the module imports or binds it to, or as an attribute), or
    from another such class of the module."""
    bases = _names_of(tree, "hypothesis.stateful", "RuleBasedStateMachine")
    machines: set[str] = set()
    while True:
        known = bases | machines
        more = {
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            and node.name not in machines
            and any(_called_name(base) in known for base in node.bases)
        } | {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            and _called_name(node.value) in known
            and not isinstance(node.value, ast.Call)
            for target in node.targets
            if isinstance(target, ast.Name) and target.id not in bases | machines
        }
        if not more:
            return machines
        machines |= more


def _is_test_case_of(node: ast.expr, machines: set[str]) -> bool:
    """`Machine.TestCase`, for a state machine of the module."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "TestCase"
        and isinstance(node.value, ast.Name)
        and node.value.id in machines
    )


def _runs_a_state_machine(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a test function calls `run_state_machine_as_test` itself (not through a helper)."""
    return any(
        isinstance(node, ast.Call) and _called_name(node) == "run_state_machine_as_test" for node in ast.walk(function)
    )


def declared_searched_tests(source: bytes) -> dict[str, bool]:
    """The tests of a pytest module the gate searches (`declared_tests`: its `@given` tests
    and state machines), each with whether the module exempts it (pure)."""
    return {key: test.exempt for key, test in declared_tests(source).items() if test.searched}


def declared_plain_tests(source: bytes) -> dict[str, bool]:
    """The plain tests of a pytest module (`declared_tests`: neither `@given` nor a state
    machine), each with whether the module carries a skip, skipif or xfail mark for it (pure)."""
    return {key: test.marked for key, test in declared_tests(source).items() if not test.searched}


def unrun_plain(module: str, declared: dict[str, bool], ran: set[str], excused_by_mark: set[str]) -> list[str]:
    """Why each plain test of the base's `module` (`declared`: `declared_plain_tests`) did not
    count as run (pure): a skip or xfail mark excused it (`excused_by_mark`: node ids) that the
    base's module does not carry for it, so the code under test may have placed it at run
    time; or it was not collected at all (`ran`: node ids that ran). A test the module does not
    declare (inherited, made at run time) has no source to read, as for `unsearched`."""

    def ours(node_ids: Iterable[str]) -> list[str]:
        return sorted(node_id for node_id in node_ids if node_id.split("::", 1)[0] == module)

    reasons = [
        f"{node_id}: a skip or xfail mark excused it that the base's module does not carry (the code under test may "
        "have placed it)"
        for node_id in ours(excused_by_mark)
        # One the module does not declare (inherited, made at run time) has no source to read.
        if function_key(node_id) in declared and not declared[function_key(node_id)]
    ]
    collected = {function_key(node_id) for node_id in ours(ran)}
    reasons += [
        f"{module}::{key}: not collected (deselected, or no longer a test at run time)"
        for key, marked in sorted(declared.items())
        if not marked and key not in collected
    ]
    return [
        f"{reason}; a plain test of the base's module must run, unless the module itself marks it" for reason in reasons
    ]


def function_key(node_id: str) -> str:
    """`Class::test` or `test` of a node id, without the module or parameters."""
    return node_id.split("::", 1)[-1].split("[", 1)[0] if "::" in node_id else ""


def _sets_max_examples(decorators: list[ast.expr]) -> bool:
    return any(
        isinstance(d, ast.Call) and _called_name(d) == "settings" and any(k.arg == "max_examples" for k in d.keywords)
        for d in decorators
    )


def _called_name(node: ast.expr) -> str | None:
    """`given` for `@given(...)` and `@hypothesis.given(...)`; a mark's name for `@pytest.mark.skip`."""
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None


def _marked(decorators: list[ast.expr], conditional: bool = False) -> bool:
    """Whether one of `decorators` is `pytest.mark.skip` or `pytest.mark.xfail` with no
    condition (`skipif`, or a positional or `condition=` argument, depends on run time), or,
    `conditional`, any skip, skipif or xfail mark."""
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if not (
            isinstance(target, ast.Attribute)
            and target.attr in ("skip", "skipif", "xfail")
            and isinstance(target.value, (ast.Attribute, ast.Name))
            and _called_name(target.value) == "mark"
        ):
            continue
        if conditional:
            return True
        if (
            target.attr == "skipif"
            or isinstance(decorator, ast.Call)
            and (decorator.args and target.attr == "xfail" or any(k.arg == "condition" for k in decorator.keywords))
        ):
            continue
        return True
    return False


def unsearched(
    module: str, declared: dict[str, bool], searched: dict[str, int], skipped: set[str], plain: set[str]
) -> list[str]:
    """Why each searched test of the base's `module` (`declared`: `declared_searched_tests`) was
    not searched (pure), node by node:
    no case ran (`searched`: node id -> cases run), skipped, or run once as a plain test
    (marked xfail), unless the module itself marks it skip or xfail unconditionally; and each
    test the module declares that was not collected at all (deselected, or a skip while the
    module imported)."""

    def ours(node_ids: Iterable[str]) -> list[str]:
        return sorted(node_id for node_id in node_ids if node_id.split("::", 1)[0] == module)

    def marked(node_id: str) -> bool:  # a test the module does not declare (inherited, nested) is never exempt
        return declared.get(function_key(node_id), False)

    reasons = [
        f"{node_id}: no case ran (the search ran nothing)" for node_id in ours(searched) if searched[node_id] == 0
    ]
    reasons += [f"{node_id}: skipped" for node_id in ours(skipped) if not marked(node_id)]
    reasons += [
        f"{node_id}: run once as a plain test (marked xfail?), not searched"
        for node_id in ours(plain)
        if function_key(node_id) in declared and not marked(node_id)
    ]
    collected = {function_key(node_id) for node_id in ours([*searched, *skipped, *plain])}
    reasons += [
        f"{module}::{key}: not collected (deselected, or no longer a test at run time)"
        for key, exempt in sorted(declared.items())
        if not exempt and key not in collected
    ]
    return [
        f"{reason}; a @given or stateful test of the base's module must be searched, unless the module itself marks it "
        "skip or xfail"
        for reason in reasons
    ]
