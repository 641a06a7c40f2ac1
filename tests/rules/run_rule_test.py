"""The test rule through RuleRunner: a real runner PEX built from the repository's own
runner sources and lockfile, run on a small sample, pass and fail."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from pants.backend.python import target_types_rules
from pants.backend.python.target_types import PythonRequirementTarget, PythonSourcesGeneratorTarget
from pants.backend.python.util_rules import pex_from_targets
from pants.core.goals import test as test_goal
from pants.core.goals.test import TestResult
from pants.core.target_types import ResourcesGeneratorTarget
from pants.core.util_rules import distdir, source_files, system_binaries
from pants.core.util_rules.partitions import Partitions
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.engine.internals.scheduler import ExecutionError
from pants.engine.rules import QueryRule
from pants.testutil.rule_runner import RuleRunner

from witness_gate_pants import test as test_goal_rules
from witness_gate_pants.subsystem import WitnessPropertiesFieldSet
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget
from witness_gate_pants.test import WitnessGateTestRequest

PROJECT = Path(__file__).resolve().parents[2]

SAMPLE = {
    "app/BUILD": "python_sources()",
    "app/calc.py": "def double(n):\n    return n * 2\n",
    "props/fixture.json": "[]",
    "props/calc_props.py": (
        "from hypothesis import strategies as st\nimport witness_gate\nfrom app.calc import double\n\n"
        "@witness_gate.property(payloads=st.fixed_dictionaries({'n': st.integers(0, 1000)}))\n"
        "def prop_double_is_even(payload):\n    return double(payload['n']) % 2 == 0\n"
    ),
    "props/BUILD": (
        'witness_fixture(name="fx", source="fixture.json", generator_version=1)\n'
        'witness_properties(name="props", sources=["calc_props.py"], fixture=":fx", dependencies=["app"], replays=3)\n'
    ),
    "changed.txt": "",
}


def project_files() -> dict[str, str]:
    files = {
        "3rdparty/python/BUILD": "".join(
            f'python_requirement(name="{name}", requirements=["{spec}"], resolve="python-default")\n'
            for name, spec in [
                ("hypothesis", "hypothesis==6.170.17"),
                ("jsonschema", "jsonschema>=4.23,<5"),
                ("pytest", "pytest>=8,<10"),
                ("typer", "typer>=0.12,<1"),
            ]
        ),
        "runner/BUILD": (
            'python_sources(name="lib", sources=["witness_gate/**/*.py"], dependencies=[":schemas", '
            '"3rdparty/python:hypothesis", "3rdparty/python:jsonschema", "3rdparty/python:pytest", '
            '"3rdparty/python:typer"])\n'
            'resources(name="schemas", sources=["witness_gate/_schemas/*.json"])\n'
        ),
    }
    files["3rdparty/python/default.lock"] = (PROJECT / "3rdparty/python/default.lock").read_text()
    for path in (PROJECT / "runner/witness_gate").rglob("*.py"):
        files[str(path.relative_to(PROJECT))] = path.read_text()
    for path in (PROJECT / "schemas").glob("*.schema.json"):  # the package's `_schemas` link, resolved
        files[f"runner/witness_gate/_schemas/{path.name}"] = path.read_text()
    return files


@pytest.fixture
def rule_runner() -> RuleRunner:
    pex_cli = os.environ.get("WITNESS_GATE_PEX_CLI")
    if not pex_cli:
        pytest.fail("WITNESS_GATE_PEX_CLI is unset: run the tests through ./pants, which builds that pex CLI")
    runner = RuleRunner(
        rules=[
            *test_goal_rules.rules(),
            *pex_from_targets.rules(),
            *target_types_rules.rules(),
            *source_files.rules(),
            *system_binaries.rules(),
            *distdir.rules(),
            test_goal.get_filtered_environment,
            QueryRule(TestResult, [WitnessGateTestRequest.Batch]),
            QueryRule(Partitions, [WitnessGateTestRequest.PartitionRequest]),
            QueryRule(DigestContents, [Digest]),
        ],
        target_types=[
            PythonSourcesGeneratorTarget,
            PythonRequirementTarget,
            ResourcesGeneratorTarget,
            WitnessFixtureTarget,
            WitnessPropertiesTarget,
        ],
        ca_certs_path="/etc/ssl/certs/ca-certificates.crt",
    )
    runner.write_files({**project_files(), **SAMPLE})
    set_gate_options(runner, "--witness-gate-changed-files=changed.txt")
    return runner


def set_gate_options(rule_runner: RuleRunner, *gate_options: str) -> None:
    pex_path, known_version = os.environ["WITNESS_GATE_PEX_CLI"].split("|", 1)
    rule_runner.set_options(
        [
            "--python-interpreter-constraints=['==3.11.*']",
            "--python-enable-resolves",
            "--python-default-resolve=python-default",
            "--python-resolves={'python-default': '3rdparty/python/default.lock'}",
            "--python-pip-version=20.3.4-patched",
            "--python-bootstrap-search-path=['<PYENV>', '<PATH>']",
            "--source-root-patterns=['/runner', '/']",
            "--pex-cli-version=v2.1.137",
            f"--pex-cli-known-versions=['{known_version}']",
            f"--pex-cli-url-template=file://{pex_path}",
            "--witness-gate-runner=//runner:lib",
            "--witness-gate-enabled",
            *gate_options,
        ],
        env_inherit={"PATH", "PYENV_ROOT", "HOME"},
    )


def run(rule_runner: RuleRunner) -> TestResult:
    target = rule_runner.get_target(Address("props", target_name="props"))
    batch = WitnessGateTestRequest.Batch("witness-gate", (WitnessPropertiesFieldSet.create(target),), None)
    return rule_runner.request(TestResult, [batch])


def test_the_test_rule_passes_a_sound_target_and_fails_a_regression(rule_runner):
    passed = run(rule_runner)
    assert passed.exit_code == 0, passed.stdout + passed.stderr
    assert "gate: pass" in passed.stdout
    assert passed.extra_output is not None and "gate.json" in passed.extra_output.files

    rule_runner.write_files(
        {"app/calc.py": "def double(n):\n    return n * 2 + (1 if n > 500 else 0)\n", "changed.txt": "app/calc.py\n"}
    )
    failed = run(rule_runner)
    assert failed.exit_code == 1, failed.stdout + failed.stderr
    # replays=3 in six interpreters, confirmed by a second round: 36 replays, every one failing.
    assert "regression: prop_double_is_even failed 36/36 replays" in failed.stdout
    assert failed.extra_output is not None
    witnesses = [name for name in failed.extra_output.files if name.startswith("witnesses/")]
    assert len(witnesses) == 1 and witnesses[0].startswith("witnesses/prop_double_is_even.")
    contents = {
        entry.path: entry.content for entry in rule_runner.request(DigestContents, [failed.extra_output.digest])
    }
    assert json.loads(contents["gate.json"])["witnesses"][0]["label"] == "regression"


def test_a_pytest_module_of_given_tests_is_gated_as_it_is(rule_runner):
    rule_runner.write_files(
        {
            "props/test_calc.py": (
                "from hypothesis import given, strategies as st\nfrom app.calc import double\n\n"
                "@given(st.integers(0, 1000))\ndef test_double_is_even(n):\n    assert double(n) % 2 == 0\n\n"
                "def test_double_of_zero():\n    assert double(0) == 0\n"
            ),
            "props/BUILD": (
                'witness_fixture(name="fx", source="fixture.json", generator_version=1)\n'
                'witness_properties(name="props", sources=["test_calc.py"], fixture=":fx", dependencies=["app"], '
                "replays=3)\n"
            ),
        }
    )
    passed = run(rule_runner)
    assert passed.exit_code == 0, passed.stdout + passed.stderr
    assert (
        "pytest: 1 @given test(s) searched (100-100 cases each); plain tests (run once; a failure blocks): 1 passed, "
        "0 failed" in passed.stdout
    )

    rule_runner.write_files(
        {"app/calc.py": "def double(n):\n    return n * 2 + (1 if n > 500 else 0)\n", "changed.txt": "app/calc.py\n"}
    )
    failed = run(rule_runner)
    assert failed.exit_code == 1, failed.stdout + failed.stderr
    assert "regression: props/test_calc.py::test_double_is_even failed 36/36 replays" in failed.stdout
    assert "failing input: Failing test case: test_double_is_even( n=501, )" in failed.stdout


def test_oracle_dependencies_reach_the_sandbox_and_are_judged_as_oracle(rule_runner):
    rule_runner.write_files(
        {
            "props/numbers.py": "from hypothesis import strategies as st\n\nnumbers = st.fixed_dictionaries({'n': "
            "st.integers(0, 1000)})\n",
            "props/calc_props.py": SAMPLE["props/calc_props.py"]
            .replace("st.fixed_dictionaries({'n': st.integers(0, 1000)})", "numbers")
            .replace("import witness_gate\n", "import witness_gate\nfrom props.numbers import numbers\n"),
            "props/BUILD": SAMPLE["props/BUILD"].replace(
                'dependencies=["app"]', 'dependencies=["app", ":numbers"], oracle_dependencies=[":numbers"]'
            )
            + 'python_sources(name="numbers", sources=["numbers.py"])\n',
        }
    )
    passed = run(rule_runner)
    assert passed.exit_code == 0, passed.stdout + passed.stderr

    # The bug, with the strategies narrowed in the same change: a mixed edit, never a pass.
    rule_runner.write_files(
        {
            "app/calc.py": "def double(n):\n    return n * 2 + (1 if n > 500 else 0)\n",
            "props/numbers.py": "from hypothesis import strategies as st\n\nnumbers = st.fixed_dictionaries({'n': "
            "st.integers(0, 1000)})\n# reworded\n",
            "changed.txt": "app/calc.py\nprops/numbers.py\n",
        }
    )
    failed = run(rule_runner)
    assert failed.exit_code == 1, failed.stdout + failed.stderr
    assert "mixed_edit: prop_double_is_even" in failed.stdout


def test_a_retained_witness_is_replayed_by_pants_test_and_blocks_the_bug_it_holds(rule_runner):
    # Not a dot-directory: those Pants ignores unless `pants_ignore` says otherwise (adopt.md).
    set_gate_options(rule_runner, "--witness-gate-changed-files=changed.txt", "--witness-gate-corpus-dir=corpus")
    buggy = {
        "app/calc.py": "def double(n):\n    return n * 2 + (1 if n > 500 else 0)\n",
        "changed.txt": "app/calc.py\n",
    }
    rule_runner.write_files(buggy)
    failed = run(rule_runner)
    assert failed.exit_code == 1 and failed.extra_output is not None, failed.stdout + failed.stderr
    contents = {
        entry.path: entry.content for entry in rule_runner.request(DigestContents, [failed.extra_output.digest])
    }
    [(name, witness)] = [
        (path.split("/")[-1], data) for path, data in contents.items() if path.startswith("witnesses/")
    ]
    # Retained (as `witness-gate retain` writes it: the bytes unchanged), then the fix.
    rule_runner.write_files({f"corpus/{name}": witness.decode(), "app/calc.py": SAMPLE["app/calc.py"]})
    held = run(rule_runner)
    assert held.exit_code == 0 and f"corpus: 1 retained witness(es) replayed and held: {name}" in held.stdout, (
        held.stdout + held.stderr
    )
    rule_runner.write_files(buggy)
    caught = run(rule_runner)
    assert caught.exit_code == 1 and f"this input failed before (corpus entry {name})" in caught.stdout, (
        caught.stdout + caught.stderr
    )


def test_a_declared_condition_reaches_the_workers_and_its_witness(rule_runner):
    # A mode read from the environment at import, as production sets it: only that mode is buggy.
    rule_runner.write_files(
        {
            "app/calc.py": "import os\n\nFAST = os.environ.get('CALC_MODE') == 'fast'\n\n\ndef double(n):\n    return "
            "n + n + (1 if FAST and n > 500 else 0)\n",
            "props/BUILD": SAMPLE["props/BUILD"].replace("replays=3)", 'replays=3, conditions=["", "CALC_MODE=fast"])'),
            "changed.txt": "app/calc.py\n",
        }
    )
    failed = run(rule_runner)
    assert failed.exit_code == 1, failed.stdout + failed.stderr
    assert "regression: prop_double_is_even failed 36/36 replays" in failed.stdout
    assert "under the declared condition CALC_MODE=fast" in failed.stdout
    assert failed.extra_output is not None
    contents = {
        entry.path: entry.content for entry in rule_runner.request(DigestContents, [failed.extra_output.digest])
    }
    [witness] = [json.loads(content) for path, content in contents.items() if path.startswith("witnesses/")]
    assert witness["condition"] == {"CALC_MODE": "fast"}
    assert json.loads(contents["fixture.lock"])["conditions"] == [{}, {"CALC_MODE": "fast"}]


def test_skip_is_refused_rather_than_reporting_green(rule_runner):
    target = rule_runner.get_target(Address("props", target_name="props"))
    request = WitnessGateTestRequest.PartitionRequest((WitnessPropertiesFieldSet.create(target),))
    [partition] = rule_runner.request(Partitions, [request])
    assert [field_set.address for field_set in partition.elements] == [target.address]
    rule_runner.set_options(["--witness-gate-skip"])
    with pytest.raises(ExecutionError, match="the gate has no off switch"):
        rule_runner.request(Partitions, [request])


def git(rule_runner: RuleRunner, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=rule_runner.build_root,
        check=True,
        capture_output=True,
    )


# Oracle files with the names Pants' own git helper lost (split at a space, quoted when not
# ASCII, a rename listed under its new name only), declared by the target.
ORACLE_FILES = {"props/data/golden data.txt": "1\n", "props/data/örders.txt": "2\n", "props/golden.txt": "3\n"}


@pytest.mark.parametrize(
    "oracle_edit",
    [
        pytest.param(lambda repo: repo.write_files({"props/data/golden data.txt": "1 edited\n"}), id="space"),
        pytest.param(lambda repo: repo.write_files({"props/data/örders.txt": "2 edited\n"}), id="non-ascii"),
        # The declared path moves away: only its old side is the target's.
        pytest.param(lambda repo: git(repo, "mv", "props/golden.txt", "props/golden-moved.txt"), id="rename"),
    ],
)
def test_an_oracle_edit_under_any_name_reaches_the_changed_list_from_git(rule_runner, oracle_edit):
    rule_runner.write_files(
        {
            **ORACLE_FILES,
            "props/BUILD": SAMPLE["props/BUILD"].replace(
                "replays=3)", 'replays=3, oracle_paths=["data/*.txt"], generated_oracle_paths=["golden.txt"])'
            ),
        }
    )
    git(rule_runner, "init", "-q", "-b", "main")
    git(rule_runner, "add", "-A")
    git(rule_runner, "commit", "-q", "-m", "base")
    git(rule_runner, "checkout", "-q", "-b", "topic")
    # A harmless implementation edit and the oracle edit, committed on the branch: every
    # property passes, so only the changed list tells a mixed edit from a pass.
    rule_runner.write_files({"app/calc.py": SAMPLE["app/calc.py"] + "# reworded\n"})
    oracle_edit(rule_runner)
    git(rule_runner, "commit", "-q", "-am", "topic")
    set_gate_options(rule_runner, "--witness-gate-base=main")
    result = run(rule_runner)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "mixed_edit: the diff changes implementation and oracle paths" in result.stdout, result.stdout


def test_an_oracle_file_whose_name_the_list_cannot_carry_fails_the_run(rule_runner):
    rule_runner.write_files(
        {
            "props/BUILD": SAMPLE["props/BUILD"].replace("replays=3)", 'replays=3, oracle_paths=["data/*.txt"])'),
            "props/data/golden.txt": "1\n",
        }
    )
    git(rule_runner, "init", "-q", "-b", "main")
    git(rule_runner, "add", "-A")
    git(rule_runner, "commit", "-q", "-m", "base")
    git(rule_runner, "checkout", "-q", "-b", "topic")
    rule_runner.write_files(
        {"app/calc.py": SAMPLE["app/calc.py"] + "# reworded\n", "props/data/new\nline.txt": "an oracle edit\n"}
    )
    git(rule_runner, "add", "-A")
    git(rule_runner, "commit", "-q", "-m", "topic")
    set_gate_options(rule_runner, "--witness-gate-base=main")
    with pytest.raises(ExecutionError, match="changed-file list cannot carry") as refused:
        run(rule_runner)
    assert r"'props/data/new\nline.txt'" in str(refused.value)
