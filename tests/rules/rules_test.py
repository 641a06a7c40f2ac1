"""Ownership from the target graph and the changed-file list, through the real rules."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from pants.backend.python import target_types_rules
from pants.backend.python.target_types import PythonSourcesGeneratorTarget
from pants.core.target_types import FilesGeneratorTarget
from pants.core.util_rules import source_files, system_binaries
from pants.engine.addresses import Address
from pants.engine.internals.scheduler import ExecutionError
from pants.engine.rules import QueryRule
from pants.testutil.rule_runner import RuleRunner

from witness_gate_pants import changed_paths, git, ownership as ownership_rules
from witness_gate_pants.changed_paths import ChangedPaths, ChangedPathsRequest, parse_changed_list
from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.ownership import Ownership, OwnershipRequest, PinnedFixture
from witness_gate_pants.runner_pex import runner_source_problem
from witness_gate_pants.subsystem import WitnessGate, WitnessPropertiesFieldSet
from witness_gate_pants.target_types import WitnessFixtureTarget, WitnessPropertiesTarget
from witness_gate_pants.test import relevant_changes, target_exit_code


# Import inference would run a parser process (and fetch the pex CLI); the layout below
# declares its dependencies explicitly instead.
NO_INFERENCE = ("--no-python-infer-imports", "--no-python-infer-assets", "--python-infer-init-files=never")


def set_options(rule_runner: RuleRunner, *args: str) -> None:
    rule_runner.set_options([*NO_INFERENCE, *args])


@pytest.fixture
def rule_runner() -> RuleRunner:
    runner = RuleRunner(
        rules=[
            ownership_rules.resolve_fixture,
            ownership_rules.derive_ownership,
            ownership_rules.gated_closure,
            changed_paths.read_changed_paths,
            git.run_git,
            *WitnessGate.rules(),
            *source_files.rules(),
            *system_binaries.rules(),
            *target_types_rules.rules(),
            QueryRule(Ownership, [OwnershipRequest]),
            QueryRule(ChangedPaths, [ChangedPathsRequest]),
        ],
        target_types=[
            PythonSourcesGeneratorTarget,
            FilesGeneratorTarget,
            WitnessFixtureTarget,
            WitnessPropertiesTarget,
        ],
    )
    set_options(runner)
    return runner


# A repository whose properties live under src/: a prefix convention would call them
# implementation; the target graph knows better.
LAYOUT = {
    "src/app/BUILD": 'python_sources(dependencies=["src/util"])',
    "src/app/core.py": "",
    "src/util/BUILD": 'python_sources()\nfiles(name="data", sources=["rates.csv"])',
    "src/util/helpers.py": "",
    "src/util/rates.csv": "",
    "src/app/props/props_test_helpers.py": "",
    "src/app/props/orders_props.py": "",
    "src/app/props/fixture.json": "[]",
    "src/app/props/tables/discounts.csv": "",
}


def ownership(rule_runner: RuleRunner, props_build: str) -> Ownership:
    rule_runner.write_files({**LAYOUT, "src/app/props/BUILD": props_build})
    target = rule_runner.get_target(Address("src/app/props", target_name="props"))
    return rule_runner.request(Ownership, [OwnershipRequest(WitnessPropertiesFieldSet.create(target))])


FIXTURE = 'witness_fixture(name="fx", source="fixture.json", generator_version=1)\n'


def test_ownership_follows_the_target_graph_not_path_prefixes(rule_runner):
    owned = ownership(
        rule_runner,
        FIXTURE + 'witness_properties(name="props", sources=["orders_props.py"], fixture=":fx", '
        'dependencies=["src/app"], oracle_paths=["props_test_helpers.py"], '
        'generated_oracle_paths=["stubs/generated.py"])',
    )
    assert owned.impl == ("src/app/core.py", "src/util/helpers.py")
    assert owned.oracle == (
        "src/app/props/BUILD",  # the declaration is part of the oracle
        "src/app/props/fixture.json",
        "src/app/props/orders_props.py",
        "src/app/props/props_test_helpers.py",
        "src/app/props/stubs/generated.py",  # a literal generated path counts before it exists
    )
    assert owned.property_files == ("src/app/props/orders_props.py",)
    assert owned.fixture.path == "src/app/props/fixture.json" and owned.fixture.generator_version == 1


def test_oracle_dependencies_are_oracle_even_when_dependencies_reach_them(rule_runner):
    owned = ownership(
        rule_runner,
        FIXTURE + 'python_sources(name="helpers", sources=["props_test_helpers.py"])\n'
        'witness_properties(name="props", sources=["orders_props.py"], fixture=":fx", '
        'dependencies=["src/app", ":helpers"], oracle_dependencies=[":helpers"])',
    )
    assert "src/app/props/props_test_helpers.py" in owned.oracle
    assert owned.impl == ("src/app/core.py", "src/util/helpers.py")


def test_impl_paths_and_file_dependencies_add_implementation(rule_runner):
    owned = ownership(
        rule_runner,
        FIXTURE + 'witness_properties(name="props", sources=["orders_props.py"], fixture=":fx", '
        'dependencies=["src/app", "src/util:data"], impl_paths=["tables/*.csv"])',
    )
    assert "src/util/rates.csv" in owned.impl  # a `files` dependency is implementation too
    assert "src/app/props/tables/discounts.csv" in owned.impl


def test_an_impl_path_that_matches_nothing_is_an_error(rule_runner):
    with pytest.raises(ExecutionError, match="nothing.csv"):
        ownership(
            rule_runner,
            FIXTURE + 'witness_properties(name="props", sources=["orders_props.py"], fixture=":fx", '
            'impl_paths=["nothing.csv"])',
        )


def test_depending_on_the_properties_own_sources_is_a_clear_error(rule_runner):
    with pytest.raises(ExecutionError, match="orders_props.py is both oracle"):
        ownership(
            rule_runner,
            FIXTURE + 'python_sources(name="lib")\n'
            'witness_properties(name="props", sources=["orders_props.py"], fixture=":fx", dependencies=[":lib"])',
        )


def test_fixture_must_name_a_witness_fixture(rule_runner):
    with pytest.raises(ExecutionError, match="not a `witness_fixture`"):
        ownership(
            rule_runner,
            'python_sources(name="lib")\nwitness_properties(name="props", sources=["orders_props.py"], fixture=":lib")',
        )


def test_changed_paths_from_a_file_option(rule_runner):
    rule_runner.write_files({"changed.txt": "src/b.py\nsrc/a.py\n"})
    set_options(rule_runner, "--witness-gate-changed-files=changed.txt")
    assert rule_runner.request(ChangedPaths, [ChangedPathsRequest()]).paths == ("src/a.py", "src/b.py")
    rule_runner.write_files({"changed.txt": "src/a.py\r\n"})
    set_options(rule_runner, "--witness-gate-changed-files=changed.txt")
    with pytest.raises(ExecutionError, match="changed.txt: line 1: carriage return"):
        rule_runner.request(ChangedPaths, [ChangedPathsRequest()])


def test_a_changed_file_list_that_is_not_utf8_is_refused(rule_runner):
    rule_runner.write_files({"changed.txt": b"src/\xff.py\n"})
    set_options(rule_runner, "--witness-gate-changed-files=changed.txt")
    with pytest.raises(ExecutionError, match="changed.txt: not UTF-8"):
        rule_runner.request(ChangedPaths, [ChangedPathsRequest()])


def test_a_missing_changed_file_list_is_refused(rule_runner):
    set_options(rule_runner, "--witness-gate-changed-files=nowhere.txt")
    with pytest.raises(ExecutionError, match="nowhere.txt"):
        rule_runner.request(ChangedPaths, [ChangedPathsRequest()])


def test_a_base_outside_a_git_repository_is_refused(rule_runner):
    set_options(rule_runner, "--witness-gate-base=main")
    # The current directory (this repository's checkout) is a git repository; the build root is not.
    with pytest.raises(ExecutionError, match="is not in a git repository"):
        rule_runner.request(ChangedPaths, [ChangedPathsRequest()])


def test_without_base_or_file_the_gate_refuses_to_guess(rule_runner):
    with pytest.raises(ExecutionError, match=r"set \[witness-gate\].base"):
        rule_runner.request(ChangedPaths, [ChangedPathsRequest()])


class Repo:
    """A git repository at the RuleRunner's build root: main holds the base, topic the branch."""

    def __init__(self, rule_runner: RuleRunner) -> None:
        self.rule_runner = rule_runner

    def git(self, *args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
            cwd=self.rule_runner.build_root,
            check=True,
            capture_output=True,
        )

    def start(self, files: dict[str, str]) -> None:
        self.rule_runner.write_files(files)
        self.git("init", "-q", "-b", "main")
        self.git("commit", "-q", "--allow-empty", "-m", "root")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        self.git("checkout", "-q", "-b", "topic")

    def changed(self, base: str = "main") -> tuple[str, ...]:
        # Git runs in the build root whatever the current directory (here: this repository).
        set_options(self.rule_runner, f"--witness-gate-base={base}")
        return self.rule_runner.request(ChangedPaths, [ChangedPathsRequest()]).paths


def test_changed_paths_from_git_include_branch_uncommitted_and_untracked_files(rule_runner):
    repo = Repo(rule_runner)
    repo.start({"src/a.py": "", "src/b.py": ""})
    rule_runner.write_files({"src/a.py": "changed"})
    repo.git("commit", "-q", "-am", "topic")
    rule_runner.write_files({"src/b.py": "uncommitted", "src/d.py": "untracked"})
    assert repo.changed() == ("src/a.py", "src/b.py", "src/d.py")
    assert repo.changed("topic") == ("src/b.py", "src/d.py")  # nothing committed since the merge base
    with pytest.raises(ExecutionError, match="no-such-ref"):
        repo.changed("no-such-ref")
    with pytest.raises(ExecutionError, match="not a git ref"):
        repo.changed("--output=x")


def test_changed_paths_from_git_keep_every_name_and_both_sides_of_a_rename(rule_runner):
    # Pants' own helper splits git's output at whitespace, leaves non-ASCII names quoted and
    # lets git detect renames: each of these oracle edits dropped out of its list.
    repo = Repo(rule_runner)
    repo.start(
        {
            "props/my props.py": "",
            "props/örders.py": "",
            "props/old.py": "x = 1\n" * 20,
            "props/staged old.py": "y = 2\n" * 20,
        }
    )
    rule_runner.write_files({"props/my props.py": "# edited", "props/örders.py": "# edited"})
    repo.git("mv", "props/old.py", "props/new.py")
    repo.git("commit", "-q", "-am", "topic")
    repo.git("mv", "props/staged old.py", "props/staged ö new.py")  # a rename staged, not committed
    rule_runner.write_files({"props/untracked ö.py": ""})
    assert repo.changed() == (
        "props/my props.py",
        "props/new.py",
        "props/old.py",
        "props/staged old.py",
        "props/staged ö new.py",
        "props/untracked ö.py",
        "props/örders.py",
    )


@pytest.mark.parametrize(
    "name, shown",
    [
        (b"props/new\nline.py", r"'props/new\nline.py'"),
        (b"props/tab\t.py", r"'props/tab\t.py'"),
        (b"props/trailing.py ", "'props/trailing.py '"),
        (b"props/\xff.py", r"'props/\udcff.py'"),
    ],
)
def test_a_changed_name_the_list_cannot_carry_fails_closed(rule_runner, name, shown):
    repo = Repo(rule_runner)
    repo.start({"props/p.py": ""})
    with open(os.path.join(rule_runner.build_root.encode(), name), "wb") as file:
        file.write(b"# an oracle edit the list must not lose\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "topic")
    with pytest.raises(ExecutionError, match="1 changed path\\(s\\) the changed-file list cannot carry") as refused:
        repo.changed()
    assert shown in str(refused.value)
    assert "`witness-gate review` blocks on them" in str(refused.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a.py\n\nb.py\n", "line 2: blank line"),
        ("/abs.py\n", "line 1"),
        ("a/../b.py\n", "line 1"),
        ("./a.py\n", "line 1"),
        ("a.py\n src/b.py\n", "line 2: ' src/b.py' has leading or trailing whitespace"),
        ("src/a\x00.py\n", "line 1"),
    ],
)
def test_parse_changed_list_refuses_malformed_lines(text, message):
    with pytest.raises(WitnessGateError, match=message):
        parse_changed_list(text, "changed.txt")


def test_relevant_changes_keep_owned_paths_and_freezes_only():
    owned = Ownership(("p.py",), PinnedFixture("f.json", 1, None), ("src/a.py",), ("p.py", "f.json"), None)  # type: ignore[arg-type]
    changed = ("README.md", "src/a.py", "f.json", ".witness-gate/freezes/x.json", ".witness-gate/other")
    assert relevant_changes(changed, owned, ".witness-gate/freezes") == (
        ".witness-gate/freezes/x.json",
        "f.json",
        "src/a.py",
    )


# The path cases the runner runs too (tests/runner/path_cases_test.py): the plugin restates
# the runner's rules, and the table keeps the two from drifting.
PATH_CASES = json.loads((Path(__file__).resolve().parents[1] / "paths" / "cases.json").read_text("utf-8"))


@pytest.mark.parametrize("case", PATH_CASES["repository_paths"], ids=repr)
def test_a_changed_file_line_is_a_repository_path_or_refused_as_the_runner_refuses_it(case):
    listed = f"a.py\n{case['path']}\nb.py\n"
    if case["problem"] is None:
        assert case["path"] in parse_changed_list(listed, "changed.txt")
    else:
        with pytest.raises(WitnessGateError, match="^changed.txt: line 2: ") as refused:
            parse_changed_list(listed, "changed.txt")
        assert case["problem"] in str(refused.value)


@pytest.mark.parametrize("case", PATH_CASES["freezes"], ids=repr)
def test_a_change_inside_the_freezes_directory_is_relevant_to_every_target(case):
    unowned = Ownership((), None, (), (), None)  # type: ignore[arg-type]
    assert relevant_changes([case["path"]], unowned, case["freezes_dir"]) == ((case["path"],) if case["inside"] else ())


@pytest.mark.parametrize(
    "process_exit, gate_json, expected_exit, says",
    [
        (0, b'{"verdict": "pass", "exit_code": 0}', 0, None),
        (1, b'{"verdict": "blocked", "exit_code": 1}', 1, None),
        (3, b'{"verdict": "oracle_review", "exit_code": 3}', 3, None),
        # Code under test that ends the runner with exit 0 leaves no verdict behind.
        (0, None, 1, "no gate.json"),
        (0, b"", 1, "not JSON"),
        (0, b'{"verdict": "pass", "exit_code": 1}', 1, "no consistent verdict"),
        (0, b'{"verdict": "blocked", "exit_code": 1}', 1, "although the runner exited 0"),
        (0, b'["pass"]', 1, "no consistent verdict"),
        (2, None, 2, None),
        (1, b'{"verdict": "pass", "exit_code": 0}', 1, "although gate.json says pass"),
    ],
)
def test_a_target_passes_only_on_a_passing_gate_json_and_exit_zero(process_exit, gate_json, expected_exit, says):
    exit_code, message = target_exit_code(process_exit, gate_json)
    assert exit_code == expected_exit
    assert (message is None) if says is None else (says in message)


@pytest.mark.parametrize(
    "runner, resolve, problem",
    [
        ("//runner:lib", None, None),
        (None, "python-default", None),
        (None, None, "does not say where the runner comes from: add `witness-gate==<version>` to a resolve"),
        ("//runner:lib", "python-default", "sets both `runner` and `install_from_resolve`"),
    ],
)
def test_the_runner_comes_from_exactly_one_place(runner, resolve, problem):
    found = runner_source_problem(runner, resolve)
    assert found is None if problem is None else problem in found
