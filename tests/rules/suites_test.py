"""`pants witness-gate-suites`: what review reads from the graph, through the real goal."""

from __future__ import annotations

import json
import subprocess

import pytest
from pants.backend.python import target_types_rules
from pants.backend.python.target_types import PythonRequirementTarget, PythonSourcesGeneratorTarget
from pants.backend.python.util_rules import python_sources
from pants.core.target_types import FilesGeneratorTarget
from pants.core.util_rules import source_files, system_binaries
from pants.engine.internals.scheduler import ExecutionError
from pants.testutil.rule_runner import RuleRunner

from witness_gate_pants import suites
from witness_gate_pants import test as test_goal_rules
from witness_gate_pants.subsystem import WitnessGate
from witness_gate_pants.suites import SuitesGoal
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget

NO_INFERENCE = ("--no-python-infer-imports", "--no-python-infer-assets", "--python-infer-init-files=never")

LAYOUT = {
    "src/shop/BUILD": 'python_sources(dependencies=["src/util"])',
    "src/shop/cart.py": "",
    "src/util/BUILD": "python_sources()",
    "src/util/money.py": "",
    "tests/props/BUILD": (
        'witness_fixture(name="fx", source="fixture.json", generator_version=2)\n'
        'witness_properties(name="cart", sources=["cart_props.py"], fixture=":fx", dependencies=["src/shop"], '
        "replays=7,"
        ' max_examples=250, generated_oracle_paths=["stubs.py"], conditions=["", "TZ=America/New_York '
        'SHOP_REGION=US"])\n'
        'witness_properties(name="money", sources=["money_*.py", "!money_old.py"], fixture=":fx", '
        'dependencies=["src/util"])\n'
    ),
    "tests/props/cart_props.py": "",
    "tests/props/money_props.py": "",
    "tests/props/fixture.json": "[]",
}


@pytest.fixture
def rule_runner() -> RuleRunner:
    runner = RuleRunner(
        rules=[
            *test_goal_rules.rules(),
            *suites.rules(),
            *python_sources.rules(),
            *WitnessGate.rules(),
            *source_files.rules(),
            *system_binaries.rules(),
            *target_types_rules.rules(),
        ],
        target_types=[
            PythonSourcesGeneratorTarget,
            PythonRequirementTarget,
            FilesGeneratorTarget,
            WitnessFixtureTarget,
            WitnessPropertiesTarget,
        ],
    )
    runner.write_files(LAYOUT)
    git(runner, "init", "-q", "-b", "main")
    git(runner, "add", "-A")
    git(runner, "commit", "-q", "-m", "base")
    return runner


def git(rule_runner: RuleRunner, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=rule_runner.build_root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def export(rule_runner: RuleRunner, *options: str) -> str:
    result = rule_runner.run_goal_rule(
        SuitesGoal,
        args=["::"],
        global_args=[*NO_INFERENCE, "--source-root-patterns=['/src', '/tests/props']", *options],
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_every_gated_target_with_what_pants_test_would_run_it_with(rule_runner):
    document = json.loads(export(rule_runner, "--witness-gate-freezes-dir=gate/freezes"))
    assert document["commit"] == git(rule_runner, "rev-parse", "HEAD")
    assert (
        document["schema_version"],
        document["freezes_dir"],
        document["max_freeze_hours"],
        document["replay_timeout_seconds"],
    ) == (1, "gate/freezes", 168, 60)
    cart, money = document["suites"]
    assert cart == {
        "name": "tests.props.cart",
        "address": "tests/props:cart",
        "fixture": "tests/props/fixture.json",
        "generator_version": 2,
        "properties": ["tests/props/cart_props.py"],
        "replays": 7,
        "max_examples": 250,
        "import_paths": ["src"],  # the closure's source roots; property modules are imported by path
        "impl": ["src/shop/cart.py", "src/util/money.py"],
        "oracle": [
            "tests/props/BUILD",
            "tests/props/cart_props.py",
            "tests/props/fixture.json",
            "tests/props/stubs.py",
        ],
        "oracle_globs": ["tests/props/cart_props.py", "tests/props/stubs.py"],
        "conditions": ["", "TZ=America/New_York SHOP_REGION=US"],  # as declared: the runner parses them
    }
    assert (money["address"], money["impl"], money["replays"], money["max_examples"]) == (
        "tests/props:money",
        ["src/util/money.py"],
        5,
        100,
    )
    assert money["oracle_globs"] == ["tests/props/money_*.py"]  # a property module the head adds there is oracle
    assert money["conditions"] == []
    assert "requirements" not in document  # no python_requirement in any closure


def test_the_same_graph_prints_the_same_bytes(rule_runner):
    assert export(rule_runner) == export(rule_runner)


def test_a_checkout_with_uncommitted_changes_is_refused(rule_runner):
    # The document names a commit: a graph read from edits on top of it would be a lie.
    rule_runner.write_files({"tests/props/BUILD": LAYOUT["tests/props/BUILD"].replace("replays=7", "replays=1")})
    with pytest.raises(ExecutionError, match="uncommitted changes"):
        export(rule_runner)


RESOLVES = (
    "--python-enable-resolves",
    "--python-resolves={'python-default': '3rdparty/default.lock', 'tools': '3rdparty/tools.lock'}",
)


def require(rule_runner: RuleRunner, **resolves: str) -> None:
    """src/util requires `Money_Lib` (and, where `resolves` names them, more from other resolves)."""
    dependencies = ["3rdparty:money", *(f"3rdparty:{name}" for name in resolves)]
    rule_runner.write_files(
        {
            "3rdparty/BUILD": 'python_requirement(name="money", requirements=["Money_Lib==1.2"])\n'
            + "".join(
                f'python_requirement(name="{name}", requirements=["{name}==1.0"], resolve="{resolve}")\n'
                for name, resolve in resolves.items()
            ),
            "src/util/BUILD": f"python_sources(dependencies={dependencies!r})",
        }
    )
    git(rule_runner, "add", "-A")
    git(rule_runner, "commit", "-q", "-m", "src/util requires a third-party project")


def test_the_projects_the_suites_require_come_with_their_resolves_lockfile(rule_runner):
    require(rule_runner)
    document = json.loads(export(rule_runner, *RESOLVES))
    assert document["requirements"] == {"lockfile": "3rdparty/default.lock", "projects": ["Money-Lib"]}


def test_projects_from_two_resolves_are_refused(rule_runner):
    require(rule_runner, tool="tools")
    with pytest.raises(ExecutionError, match="the suites require projects from 2 resolves"):
        export(rule_runner, *RESOLVES)
