"""The pull-request gate against the routes to a green gate a patch can choose: each attack
as a commit on a branch from a committed base, through the real `witness-gate review`.

The base is the orders example with its suite declared in pyproject.toml. Each attack
puts the same deterministic bug into the implementation and then tries to hide it by
changing something else in the same patch (A. the gate's controls, B and E. the declared
suites or the implementation set, C. the oracle, D. the git state, F. the freezes, G. the
oracle's helpers); each must end red with the reason. The two-step flow shows the gate is
not just red: a reviewed freeze merged first lets a flake through until it expires.
review_test.py holds the honest patches and the attacks found later.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path


import pytest

from support.flaky import flaky_property_source
from support.review_repo import (
    BUG,
    CAUGHT,
    IMPL,
    ORACLE,
    WEAKEN,
    Repo,
    assert_red,
    buggy,
    graph_document,
    review_repo,
    strategies_as_helper,
)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return review_repo(tmp_path)


# --- A. the gate's own controls ------------------------------------------------------


@pytest.mark.parametrize(
    "path, old, new",
    [
        ("pyproject.toml", 'oracle-prefixes = ["tests/properties/"]', 'oracle-prefixes = ["nowhere/"]'),
        ("pyproject.toml", 'import-paths = ["src"]', 'import-paths = ["decoy", "src"]'),
        ("pyproject.toml", 'properties = ["tests/properties"]', 'properties = ["tests/nothing"]'),
    ],
    ids=["move the oracle prefix", "shadow the import path", "point the suite elsewhere"],
)
def test_editing_the_configuration_with_the_bug_is_judged_not_obeyed(repo: Repo, path, old, new):
    shutil.copytree(repo.root / "src/orders_app", repo.root / "decoy/orders_app")  # unbroken: copied before the bug
    buggy(repo)
    repo.edit(path, old, new)
    repo.commit("bug, and a configuration that hides it")
    assert_red(repo.review(), CAUGHT, "oracle edit: pyproject.toml (owner: gate controls)", "mixed_edit")


CONTROLS = (
    "pants",
    "pants.toml",
    ".pants.rc",
    "BUILD",
    "WORKSPACE",
    ".bazelrc",
    ".ci/run",
    ".github/workflows/ci.yml",
    ".bazelignore",
    "bazel/BUILD.bazel",
    "CODEOWNERS",
    "docs/CODEOWNERS",
)


def test_a_launcher_or_build_setting_in_the_same_patch_is_an_oracle_edit(repo: Repo):
    # Every control in one patch, one review: each must be named as an oracle edit on a line
    # of its own, so a control the review failed to recognise is missed by name, and the bug
    # is still caught.
    buggy(repo)
    for control in CONTROLS:
        (repo.root / control).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / control).write_text("[witness-gate]\nenabled = false\n")
    repo.commit("bug, and the gate switched off every way")
    result = repo.review()
    assert_red(result, CAUGHT, "mixed_edit")
    missed = [control for control in CONTROLS if f"oracle edit: {control} (owner: gate controls)" not in result.stdout]
    assert not missed, (missed, result.stdout)


def test_the_callers_environment_does_not_change_the_verdict(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    noise = {
        "PYTHONHASHSEED": "1",
        "HYPOTHESIS_PROFILE": "ci",
        "PEX_SCRIPT": "/bin/true",
        "PANTS_WITNESS_GATE_ENABLED": "false",
        "GIT_DIR": "/nonexistent",
        "PYTHONSAFEPATH": "1",
    }
    assert_red(repo.review(env=noise), "orders: regression")


def test_a_git_directory_in_the_environment_does_not_redirect_the_review(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    elsewhere = repo.root.parent / "elsewhere.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(elsewhere)], check=True)
    subprocess.run(
        ["git", "-C", str(elsewhere), "branch", "-f", "patch", "main"], check=True
    )  # there the head changes nothing
    assert_red(repo.review(env={"GIT_DIR": str(elsewhere)}), CAUGHT)


# --- B and E. the gated suite or its implementation disappears --------------------------


def test_removing_the_suite_from_the_head_does_not_remove_it_from_the_review(repo: Repo):
    buggy(repo)
    text = (repo.root / "pyproject.toml").read_text()
    (repo.root / "pyproject.toml").write_text(text[: text.index("# What `witness-gate review` gates")])
    repo.commit("bug, and no suite any more")
    assert_red(repo.review(), CAUGHT, "oracle edit: pyproject.toml")


# --- C. the oracle vanishes from the diff -----------------------------------------------


def test_deleting_the_property_module_does_not_hide_the_bug(repo: Repo):
    buggy(repo)
    (repo.root / ORACLE).unlink()
    repo.commit("bug, and the property deleted")
    assert_red(repo.review(), CAUGHT, f"oracle edit: {ORACLE}", "mixed_edit")


@pytest.mark.parametrize("new_name", ["örders_props.py", "orders props.py", "orders\nprops.py"])
def test_renaming_and_weakening_the_property_is_both_sides_of_a_rename(repo: Repo, new_name):
    buggy(repo)
    repo.edit(ORACLE, *WEAKEN)
    repo.git("mv", ORACLE, f"tests/properties/{new_name}")
    repo.commit("bug, and the property renamed and weakened")
    result = repo.review()
    assert_red(result, CAUGHT, f"oracle edit: {ORACLE}", "mixed_edit")
    if "\n" in new_name:  # one name, never two lines of the gate's changed-file list
        assert "a changed path the gate's list cannot carry; judged by its owner only" in result.stdout, result.stdout


def test_a_file_an_oracle_symlink_points_to_is_oracle(repo: Repo):
    (repo.root / "checks").mkdir()
    (repo.root / "checks/limits.json").write_text('{"lowest_total": 0}\n')
    os.symlink("../../checks/limits.json", repo.root / "tests/properties/limits.json")
    repo.commit("base: shared limits reached through a symlink in the properties")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    (repo.root / "checks/limits.json").write_text('{"lowest_total": -1000}\n')
    repo.commit("bug, and the shared limits loosened")
    assert_red(
        repo.review(),
        "oracle edit: checks/limits.json (owner: tests/properties/limits.json (through a symlink))",
        "mixed_edit",
    )


# --- D. the agent's own git state ------------------------------------------------------


def test_head_is_refused_as_a_base(repo: Repo):
    for base in ("HEAD", "HEAD~1", "@", "ORIG_HEAD"):
        result = repo.review(base=base)
        assert result.returncode == 2 and "moves with the checkout" in result.stderr, (base, result.stderr)


def test_head_may_be_any_revision_of_the_patch(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    assert_red(repo.review(head="HEAD"), CAUGHT)  # the checkout is on the patch branch


def test_an_implementation_bug_is_a_regression_and_uncommitted_and_excluded_files_play_no_part(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    repo.edit(IMPL, *reversed(BUG))  # fixed in the working tree only
    repo.git("update-index", "--skip-worktree", IMPL)
    (repo.root / ".git/info/exclude").write_text("tests/properties/extra.py\n")
    (repo.root / "tests/properties/extra.py").write_text("raise SystemExit(0)\n")
    assert_red(repo.review(), "orders: regression: prop_order_total_non_negative")
    assert repo.review_json()["implementation_paths"] == [IMPL]


# --- E. the implementation set swapped through a build file ------------------------------

# Each build tool's declaration of the gated targets, and the edit that points them at an
# unbroken copy of the implementation. Bazel's puts the fixture in a package of its own,
# so its BUILD.bazel names only witness_gate_test.
PANTS_DECLARATION = (
    'witness_fixture(name="fx", source="fixtures/orders.json", generator_version=3)\n'
    'witness_properties(name="properties", sources=["properties/*.py"], fixture=":fx", '
    'dependencies=["src/orders_app"])\n'
)
GATED_DECLARATIONS = {
    "pants": ("tests/BUILD", PANTS_DECLARATION, 'dependencies=["src/orders_app"]', 'dependencies=["decoy/orders_app"]'),
    "pants BUILD.pants": (
        "tests/BUILD.pants",
        PANTS_DECLARATION,
        'dependencies=["src/orders_app"]',
        'dependencies=["decoy/orders_app"]',
    ),
    "bazel": (
        "tests/BUILD.bazel",
        'load("//tools:gate.bzl", "witness_gate_test")\n'
        'witness_gate_test(name = "properties", sources = glob(["properties/*.py"]), fixture = '
        '"//tests/fixtures:orders",\n'
        '                  dependencies = ["//src/orders_app"])\n',
        '"//src/orders_app"',
        '"//decoy/orders_app"',
    ),
}


def declared_in_build_files_only(repo: Repo) -> None:
    """The base declares its suite once, in a build file: no pyproject suite beside it."""
    (repo.root / "pyproject.toml").unlink()


def review_from_graph(repo: Repo, build_file: str = "tests/BUILD"):
    """The review with the document the base's `pants witness-gate-suites` (or
    `@witness_gate//bazel:suites`) prints."""
    oracle = sorted([build_file, "tests/fixtures/orders.json", "tests/properties/orders_props.py"])
    return repo.review_graph(graph_document(repo.git("rev-parse", "main"), oracle=oracle))


@pytest.mark.parametrize("tool", sorted(GATED_DECLARATIONS))
def test_a_build_file_that_declares_gated_targets_is_a_control(repo: Repo, tool: str):
    build_file, declaration, original, decoy = GATED_DECLARATIONS[tool]
    (repo.root / build_file).write_text(declaration)
    (repo.root / "src/orders_app/BUILD").write_text("python_sources()\n")  # the implementation's own: not a control
    declared_in_build_files_only(repo)
    repo.commit(f"base: the gated targets declared for {tool} test")
    repo.git("branch", "-f", "main", "HEAD")
    shutil.copytree(repo.root / "src/orders_app", repo.root / "decoy/orders_app")  # unbroken
    buggy(repo)
    repo.edit(build_file, original, decoy)
    repo.commit("bug, and the properties pointed at an unbroken copy")
    reviewed = review_from_graph(repo, build_file)
    assert_red(
        reviewed, CAUGHT, f"oracle edit: {build_file} (owner: gate controls (declares gated targets))", "mixed_edit"
    )


@pytest.mark.parametrize("side", ["base", "head"])
def test_a_build_file_that_declares_gated_targets_in_one_revision_only_is_a_control(repo: Repo, side: str):
    # The base's declaration dropped by the head (`pants test` would no longer gate it), or
    # a declaration the head adds to a build file that had none: either side makes it a control.
    (repo.root / "tests/BUILD").write_text(PANTS_DECLARATION if side == "base" else "python_sources()\n")
    if side == "base":
        declared_in_build_files_only(repo)
    repo.commit(f"base: tests/BUILD {'with' if side == 'base' else 'without'} the gated targets")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    (repo.root / "tests/BUILD").write_text(
        "python_sources()\n" if side == "base" else PANTS_DECLARATION.replace("src/orders_app", "decoy/orders_app")
    )
    repo.commit("bug, and the gated targets dropped or re-declared")
    reviewed = review_from_graph(repo) if side == "base" else repo.review()
    assert_red(
        reviewed, CAUGHT, "oracle edit: tests/BUILD (owner: gate controls (declares gated targets))", "mixed_edit"
    )


def test_a_starlark_file_that_wraps_the_gated_rule_is_a_control(repo: Repo):
    # A team's own macro around witness_gate_test decides what the test gets, like a BUILD file.
    (repo.root / "tools").mkdir()
    (repo.root / "tools/gate.bzl").write_text('load("//bazel:defs.bzl", "witness_gate_test")\n')
    repo.commit("base: a wrapper of the gated rule")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    (repo.root / "tools/gate.bzl").write_text(
        'load("//bazel:defs.bzl", _gate = "witness_gate_test")\ndef witness_gate_test(**kw): pass\n'
    )
    repo.commit("bug, and the wrapper that declares nothing")
    assert_red(
        repo.review(),
        CAUGHT,
        "oracle edit: tools/gate.bzl (owner: gate controls (declares gated targets))",
        "mixed_edit",
    )


def test_a_build_file_of_the_implementation_alone_is_implementation(repo: Repo):
    (repo.root / "src/orders_app/BUILD").write_text("python_sources()\n")
    repo.commit("base: the implementation's own build file")
    repo.git("branch", "-f", "main", "HEAD")
    (repo.root / "src/orders_app/BUILD").write_text("python_sources(sources=['*.py'])\n")
    repo.commit("an implementation change that touches its build file")
    result = repo.review()
    assert result.returncode == 0, result.stdout + result.stderr
    assert repo.review_json()["implementation_paths"] == ["src/orders_app/BUILD"]


# --- F. a freeze rides with the change it silences ---------------------------------------


def test_a_freeze_in_the_same_patch_as_the_implementation_change_blocks(repo: Repo):
    buggy(repo)
    (repo.root / ".witness-gate/freezes").mkdir(parents=True)
    (repo.root / ".witness-gate/freezes/f.json").write_text("{}\n")
    repo.commit("bug, and a freeze")
    assert_red(repo.review(), CAUGHT, "oracle edit: .witness-gate/freezes/f.json (owner: freezes)", "mixed_edit")


# --- G. oracle helpers ---------------------------------------------------------------------

HELPER = "tests/strategies/order_strategies.py"


def test_a_declared_oracle_helper_comes_from_the_base(repo: Repo):
    # The base draws its orders from a strategies module beside the properties, declared as
    # the suite's oracle dependency and importable through the base's import paths.
    strategies_as_helper(repo, "tests/strategies")
    repo.commit("base: the strategies as a declared oracle helper")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    repo.edit(HELPER, "max_value=50", "max_value=3")  # orders too small to reach the bug
    repo.commit("bug, and strategies that no longer reach it")
    assert_red(
        repo.review(), CAUGHT, f"oracle edit: {HELPER} (owner: suite orders (oracle dependencies))", "mixed_edit"
    )


# --- I. two reviews ---------------------------------------------------------------------


def test_weakening_first_and_breaking_later_never_passes_quietly(repo: Repo):
    repo.edit(ORACLE, *WEAKEN)
    repo.commit("PR 1: weaken the property")
    first = repo.review()
    assert first.returncode == 3, first.stdout + first.stderr  # owners must approve it; it is no silent pass
    assert f"oracle edit: {ORACLE}" in first.stdout


# --- the two-step flow: a reviewed freeze, then the implementation ------------------------


def flaky_base_and_a_change(repo: Repo) -> str:
    """A base with a flaky property, and an implementation change on the patch branch
    whose review is red with that flake (its witness and report stay in the review's
    --out); returns the freeze command the review printed for it."""
    (repo.root / "tests/properties/flaky_props.py").write_text(flaky_property_source())
    repo.commit("base: a flaky property")
    repo.git("branch", "-f", "main", "HEAD")
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals."""')
    repo.commit("PR 2: an implementation change")
    red = repo.review()
    assert red.returncode == 1 and "flake: prop_sometimes" in red.stdout, red.stdout + red.stderr
    [told] = [
        line
        for line in red.stdout.splitlines()
        if line.startswith("orders: to freeze it, open a pull request of its own")
    ]
    return told.split("with the file this writes: ", 1)[1]


def freeze_the_flake(repo: Repo, printed: str) -> None:
    """Runs the freeze command the review printed, as printed, then names the freeze
    .witness-gate/freezes/flake.json."""
    command = shlex.split(printed)
    assert command[:2] == ["witness-gate", "freeze"] and command[-2:] == [
        "--out",
        f".witness-gate/freezes/{command[command.index('--witness') + 1].rsplit('/', 1)[1]}",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    frozen = subprocess.run(
        [sys.executable, "-m", "witness_gate", *command[1:]], cwd=repo.root, env=env, capture_output=True, text=True
    )
    assert frozen.returncode == 0, frozen.stderr
    [freeze_file] = (repo.root / ".witness-gate/freezes").iterdir()
    freeze_file.rename(freeze_file.with_name("flake.json"))


def test_a_valid_freeze_riding_with_the_change_it_silences_blocks(repo: Repo):
    # Unlike the empty freeze above, this one would cover the flake if the head's freezes counted.
    freeze_the_flake(repo, flaky_base_and_a_change(repo))
    repo.commit("the implementation change, and a freeze of its flake")
    assert_red(repo.review(), "oracle edit: .witness-gate/freezes/flake.json (owner: freezes)", "mixed_edit")


def test_a_freeze_merged_first_lets_the_flake_pass_until_it_expires(repo: Repo):
    printed = flaky_base_and_a_change(repo)
    repo.branch("freeze", "main")
    freeze_the_flake(repo, printed)
    repo.commit("PR 1: freeze the flake")
    assert repo.review(head="freeze").returncode == 3  # the freeze itself is reviewed by the owners
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "freeze")
    repo.git("checkout", "-q", "patch")
    repo.git("rebase", "-q", "main")
    green = repo.review()
    assert green.returncode == 0, green.stdout + green.stderr
    assert "frozen by .witness-gate/freezes/flake.json" in green.stdout
    record = json.loads((repo.root / ".witness-gate/freezes/flake.json").read_text())
    record["created_at"], record["expires_at"] = "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"
    repo.git("checkout", "-q", "main")
    (repo.root / ".witness-gate/freezes/flake.json").write_text(json.dumps(record))
    repo.commit("the freeze as it stands after it expired")
    repo.git("checkout", "-q", "patch")
    repo.git("rebase", "-q", "main")
    assert_red(repo.review(), "expired at")
