"""The pull-request gate against a patch that wants to be green: every attack from a
committed base, as a commit on a branch, through the real `witness-gate review`.

The base is the orders example with its suite declared in pyproject.toml. Each attack
puts the same deterministic bug into the implementation and then tries to hide it by
changing something else in the same patch (the gate's controls, the declared suites, the
oracle, the git state, the freezes); each must end red with the reason. The honest cases
show the gate is not just red: an implementation fix passes, an oracle-only change goes
to its own review, and a reviewed freeze lets a flake through until it expires.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from xml.etree import ElementTree

import pytest

from support.flaky import flaky_property_source
from support.review_repo import BUG, CAUGHT, IMPL, ORACLE, WEAKEN, Repo, assert_red, buggy, graph_document, review_repo
from witness_gate.lock import seed_schedule


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return review_repo(tmp_path)


# --- honest patches ------------------------------------------------------------------


def test_an_implementation_only_patch_without_a_bug_passes(repo: Repo):
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, line by line."""')
    repo.commit("docstring")
    result = repo.review()
    assert result.returncode == 0, result.stdout + result.stderr
    assert repo.review_json()["verdict"] == "pass"


def test_an_oracle_only_patch_goes_to_its_own_review_even_when_it_passes(repo: Repo):
    repo.edit(ORACLE, '"""The oracle:', '"""The oracle (reworded):')
    repo.commit("reword the oracle")
    result = repo.review()
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"oracle edit: {ORACLE} (owner: suite orders (properties))" in result.stdout
    assert "Open a separate oracle review" in result.stdout


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
STRATEGIES = """lines = st.lists(
    st.fixed_dictionaries({"qty": st.integers(min_value=0, max_value=50), "price": st.integers(min_value=0, max_value=10_000)}),
    max_size=5,
)
orders = lines.map(lambda ls: {"lines": ls, "claimed_total": sum(line["qty"] * line["price"] for line in ls)})
"""  # noqa: E501 (test data: a source file, as written)


def test_a_declared_oracle_helper_comes_from_the_base(repo: Repo):
    # The base draws its orders from a strategies module beside the properties, declared as
    # the suite's oracle dependency and importable through the base's import paths.
    (repo.root / HELPER).parent.mkdir(parents=True)
    (repo.root / HELPER).write_text("from hypothesis import strategies as st\n\n" + STRATEGIES)
    repo.edit(ORACLE, STRATEGIES, "from order_strategies import orders\n")
    repo.edit("pyproject.toml", 'import-paths = ["src"]', 'import-paths = ["src", "tests/strategies"]')
    repo.edit(
        "pyproject.toml",
        'properties = ["tests/properties"]',
        'properties = ["tests/properties"]\noracle-dependencies = ["tests/strategies"]',
    )
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


# --- found by an adversarial review of the review itself ---------------------------------


def test_code_under_test_cannot_rewrite_the_oracle_on_disk(repo: Repo):
    buggy(repo)
    with open(repo.root / IMPL, "a") as handle:  # at import, from the worker's directory
        handle.write(f"\nimport pathlib\npathlib.Path({ORACLE!r}).write_text('# emptied by the code under test\\n')\n")
    repo.commit("bug, and an implementation that empties the property at import")
    assert_red(repo.review(), "importing the property module raised OSError: [Errno 30] Read-only file system")


def test_a_data_file_outside_the_implementation_prefixes_comes_from_the_head(repo: Repo):
    (repo.root / "config").mkdir()
    (repo.root / "config/pricing.json").write_text('{"bulk_discount": 0}\n')
    repo.edit(
        IMPL,
        'return line["qty"] * line["price"]',
        "import json, pathlib\n    discount = json.loads((pathlib.Path(__file__).parents[2] / "
        '"config/pricing.json").read_text())["bulk_discount"]\n'
        '    return line["qty"] * line["price"] - (discount if line["qty"] > 3 else 0)',
    )
    repo.commit("base: pricing reads a data file")
    repo.git("branch", "-f", "main", "HEAD")
    (repo.root / "config/pricing.json").write_text('{"bulk_discount": 1}\n')
    repo.commit("the bug lives in a data file nobody declared")
    assert_red(repo.review(), "regression: prop_order_total_non_negative")
    assert "config/pricing.json" in repo.review_json()["implementation_paths"]


@pytest.mark.parametrize("kind", ["backslash name", "symlink out of the tree", "directory becomes a file", "submodule"])
def test_unusual_changes_are_verdicts_not_refusals(repo: Repo, kind: str):
    buggy(repo)
    if kind == "backslash name":
        (repo.root / "docs\\notes.txt").write_text("notes\n")
    elif kind == "symlink out of the tree":
        os.symlink("/etc/hostname", repo.root / "src/orders_app/host")
    elif kind == "directory becomes a file":
        shutil.rmtree(repo.root / "src/orders_app")
        (repo.root / "src/orders_app").write_text("not a package any more\n")
    else:  # staged after `git add -A`, which would drop a gitlink with nothing on disk
        repo.git("add", "-A")
        repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.git('rev-parse', 'HEAD')},src/vendored")
        repo.git("commit", "-q", "-m", "bug, and a submodule")
    if kind != "submodule":
        repo.commit(f"bug, and a {kind}")
    result = repo.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    reason = {
        "backslash name": "'docs\\\\notes.txt': a changed path the gate's list cannot carry",
        "symlink out of the tree": "blocked: src/orders_app/host: a committed symlink that leaves the tree is refused",
        "directory becomes a file": "importing the property module raised",
        "submodule": "blocked: src/vendored: a submodule change cannot be reviewed here",
    }[kind]
    assert reason in result.stdout, result.stdout


@pytest.mark.parametrize(
    "where", ["src", "."], ids=["on the import path", "at the root, the review's working directory"]
)
def test_a_hypothesis_package_in_the_patch_cannot_stand_in_for_the_runners(repo: Repo, where: str):
    buggy(repo)
    (repo.root / where / "hypothesis").mkdir()
    (repo.root / where / "hypothesis/__init__.py").write_text(
        "def given(*a, **k):\n    return lambda f: (lambda: None)\n"
    )
    repo.commit("bug, and a hypothesis that finds nothing")
    assert_red(repo.review(), CAUGHT)


# --- the landed change: a head forked before the base moved -------------------------------

HOOK = (
    '"""The implementation under test: order totals."""\n',
    '"""The implementation under test: order totals."""\n\n\ndef _bulk_adjustment(line: dict) -> int:\n    return 0\n',
)
HOOKED = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - _bulk_adjustment(line)')


def test_a_stale_head_is_reviewed_as_the_merge_it_would_land_as(repo: Repo):
    # The patch forked before an honest change landed on main; alone, its file is right,
    # but the clean merge of both (what lands) has the bug.
    repo.branch("honest", "main")
    repo.edit(IMPL, *HOOK)
    repo.edit(IMPL, *HOOKED)
    repo.commit("a bulk-adjustment hook, 0 for now")
    repo.git("branch", "-f", "main", "honest")
    repo.git("checkout", "-q", "patch")
    (repo.root / IMPL).write_text(
        (repo.root / IMPL).read_text()
        + '\n\ndef _bulk_adjustment(line: dict) -> int:\n    return 1 if line["qty"] > 3 else 0\n'
    )
    repo.commit("a bulk credit, on a branch from before the hook")
    assert_red(repo.review(), "orders: regression: prop_order_total_non_negative")


def test_a_head_that_does_not_merge_cleanly_is_blocked(repo: Repo):
    repo.branch("honest", "main")
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, reworded on main."""')
    repo.commit("main moves")
    repo.git("branch", "-f", "main", "honest")
    repo.git("checkout", "-q", "patch")
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, reworded on the branch."""')
    repo.commit("the branch moves the same line")
    assert_red(repo.review(), f"blocked: the head does not merge cleanly into the base ({IMPL})")
    assert repo.review_json()["merged_tree"] is None


# --- symlinks above the oracle, refs and local git state ----------------------------------


@pytest.mark.parametrize("declared", ["properties", "oracle dependency"])
def test_an_oracle_reached_through_a_directory_symlink_is_oracle(repo: Repo, declared: str):
    if declared == "properties":
        repo.git("mv", "tests", "qa")
        os.symlink("qa", repo.root / "tests")
        real = "qa/properties/orders_props.py"
        repo.commit("base: the tests live in qa/, reached through tests/")
        repo.git("branch", "-f", "main", "HEAD")
        buggy(repo)
        repo.edit(real, *WEAKEN)
    else:
        (repo.root / "lib/strategies").mkdir(parents=True)
        (repo.root / "lib/strategies/order_strategies.py").write_text(
            "from hypothesis import strategies as st\n\n" + STRATEGIES
        )
        os.symlink("../lib/strategies", repo.root / "tests/strategies")
        repo.edit(ORACLE, STRATEGIES, "from order_strategies import orders\n")
        repo.edit("pyproject.toml", 'import-paths = ["src"]', 'import-paths = ["src", "tests/strategies"]')
        repo.edit(
            "pyproject.toml",
            'properties = ["tests/properties"]',
            'properties = ["tests/properties"]\noracle-dependencies = ["tests/strategies"]',
        )
        real = "lib/strategies/order_strategies.py"
        repo.commit("base: the strategies, declared through a symlinked directory")
        repo.git("branch", "-f", "main", "HEAD")
        buggy(repo)
        repo.edit(real, "max_value=50", "max_value=3")
    repo.commit("bug, and the oracle weakened where it really lives")
    assert_red(repo.review(), CAUGHT, f"oracle edit: {real} (owner: ", "(through a symlink))", "mixed_edit")


def test_a_tag_named_like_the_base_branch_is_refused_not_followed(repo: Repo):
    repo.edit(ORACLE, *WEAKEN)
    repo.commit("a weakened oracle")
    repo.git("tag", "main")  # `main` now names the branch and this tag
    repo.git("checkout", "-q", "-b", "attack", "refs/heads/main")
    buggy(repo)
    repo.commit("bug")
    result = repo.review(head="attack")
    assert result.returncode == 2 and "names refs/heads/main and refs/tags/main" in result.stderr, (
        result.stdout + result.stderr
    )
    assert_red(repo.review(base="refs/heads/main", head="attack"), CAUGHT)


def _smudge_filter(repo: Repo, git_dir: Path) -> None:
    (git_dir / "info/attributes").write_text("tests/properties/*.py filter=blank\n")
    repo.git("config", "filter.blank.smudge", "true")  # empties the property on checkout or archive


def _export_ignore(repo: Repo, git_dir: Path) -> None:
    (git_dir / "info/attributes").write_text("tests/properties/*.py export-ignore\n")


def _graft(repo: Repo, git_dir: Path) -> None:
    # The base grafted onto the head: the head looks merged already, so nothing would change.
    (git_dir / "info/grafts").write_text(f"{repo.git('rev-parse', 'main')} {repo.git('rev-parse', 'patch')}\n")


def _replace(repo: Repo, git_dir: Path) -> None:
    # The buggy blob replaced by the base's: every read of the head's file would get the fixed code.
    repo.git("replace", repo.git("rev-parse", f"patch:{IMPL}"), repo.git("rev-parse", f"main:{IMPL}"))


def _ref_file(repo: Repo, git_dir: Path) -> None:
    # What `git rev-parse main` reads before refs/heads/main, pointing at a weakened oracle on no branch.
    repo.branch("weak", "main")
    repo.edit(ORACLE, *WEAKEN)
    repo.commit("a weakened oracle")
    (git_dir / "main").write_text(repo.git("rev-parse", "weak") + "\n")
    repo.git("checkout", "-q", "patch")
    repo.git("branch", "-D", "weak")


@pytest.mark.parametrize(
    "trick", [_smudge_filter, _export_ignore, _graft, _replace, _ref_file], ids=lambda trick: trick.__name__.strip("_")
)
def test_local_git_state_cannot_rewrite_what_is_reviewed(repo: Repo, trick):
    buggy(repo)
    repo.commit("bug")
    trick(repo, repo.root / ".git")
    assert_red(repo.review(), CAUGHT)


def test_a_committed_gitattributes_is_a_control(repo: Repo):
    (repo.root / ".gitattributes").write_text("tests/properties/orders_props.py export-ignore\n")
    repo.commit("attributes that would drop the oracle from an archive")
    result = repo.review()
    assert result.returncode == 3, result.stdout + result.stderr
    assert "oracle edit: .gitattributes (owner: gate controls (git attributes))" in result.stdout


# --- the process that decides, and its work directory ------------------------------------


def test_a_committed_stdlib_module_does_not_run_in_the_runner(repo: Repo):
    buggy(repo)
    (repo.root / "tomllib.py").write_text("import os\nos._exit(0)\n")  # the review runs with this checkout as its cwd
    repo.commit("bug, and a tomllib that ends the runner green")
    assert_red(repo.review(), CAUGHT)


def test_a_committed_review_work_directory_blocks(repo: Repo):
    (repo.root / ".witness-gate-review/orders/witnesses").mkdir(parents=True)
    (repo.root / ".witness-gate-review/orders/witnesses/junk.json").write_text("{}\n")
    repo.commit("a stray witness where the review works")
    assert_red(repo.review(), "blocked: .witness-gate-review/ is committed: it is the review's own work directory")
    # And the review's own artifacts never mix with what the patch put there.
    assert not (repo.root.parent / "out/orders/witnesses/junk.json").exists()


# --- G. a pull-request job set to write the shared remote cache (docs/scale-out.md) ------
# The control is the cache server's read-only endpoint for pull requests; this tripwire
# refuses a job whose environment or base configuration would write anyway.

NO_CACHE_WRITE = "pass --remote-cache-write only on protected-branch jobs"


def assert_refused(result, *reasons: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and NO_CACHE_WRITE in result.stderr, result.stderr
    for reason in reasons:
        assert reason in result.stderr, (reason, result.stderr)
    assert not result.stdout, result.stdout  # refused before any suite ran


def commit_base(repo: Repo, path: str, text: str) -> None:
    """Commits `text` at `path` as the new base (main); the patch branch starts from it."""
    (repo.root / path).write_text(text)
    repo.commit(f"base: {path}")
    repo.git("branch", "-f", "main", "HEAD")


@pytest.mark.parametrize("variable", ["PANTS_REMOTE_CACHE_WRITE", "PANTS_GLOBAL_REMOTE_CACHE_WRITE"])
@pytest.mark.parametrize("value", ["true", "True", "1", "yes", " TRUE ", "%(env.WRITE)s"])
def test_an_environment_that_writes_the_remote_cache_is_refused(repo: Repo, variable, value):
    repo.commit("an empty patch")
    assert_refused(repo.review(env={variable: value}), f"{variable}={value!r} in the environment")


@pytest.mark.parametrize(
    "path, text, reason",
    [
        (
            "pants.toml",
            "[GLOBAL]\nremote_cache_write = true\n",
            "main:pants.toml sets [GLOBAL].remote_cache_write = True",
        ),
        (
            "pants.toml",
            '[GLOBAL]\nremote_cache_write = "True"\n',
            "main:pants.toml sets [GLOBAL].remote_cache_write = 'True'",
        ),
        (
            "pants.toml",
            "[DEFAULT]\nremote_cache_write = true\n",
            "main:pants.toml sets [DEFAULT].remote_cache_write = True",
        ),
        (
            ".pants.rc",
            "[GLOBAL]\nremote_cache_write = true\n",
            "main:.pants.rc sets [GLOBAL].remote_cache_write = True",
        ),
        ("pants.toml", "[GLOBAL\nremote_cache_write = true\n", "main:pants.toml is not TOML"),
    ],
    ids=["pants.toml", "a string", "the DEFAULT section", ".pants.rc", "unparseable"],
)
def test_a_base_configuration_that_writes_the_remote_cache_is_refused(repo: Repo, path, text, reason):
    commit_base(repo, path, text)
    repo.commit("an empty patch")
    assert_refused(repo.review(), reason)


def test_the_working_tree_cannot_unset_the_bases_cache_write(repo: Repo):
    commit_base(repo, "pants.toml", "[GLOBAL]\nremote_cache_write = true\n")
    repo.commit("an empty patch")
    (repo.root / "pants.toml").write_text("[GLOBAL]\nremote_cache_write = false\n")  # uncommitted
    assert_refused(repo.review(), "main:pants.toml sets [GLOBAL].remote_cache_write = True")


def test_a_job_that_only_reads_the_remote_cache_is_reviewed(repo: Repo):
    # The control for the refusals above: reading, or writing switched off, is no refusal.
    commit_base(repo, "pants.toml", "[GLOBAL]\nremote_cache_read = true\nremote_cache_write = false\n")
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, line by line."""')
    repo.commit("docstring")
    (repo.root / "pants.toml").write_text("[GLOBAL]\nremote_cache_write = true\n")  # the working tree plays no part
    result = repo.review(env={"PANTS_REMOTE_CACHE_WRITE": "false", "PANTS_REMOTE_CACHE_READ": "true"})
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_head_that_turns_on_cache_writes_is_an_oracle_edit(repo: Repo):
    # Not a refusal: the head is the patch, judged; CI's write would come from the base.
    (repo.root / "pants.toml").write_text("[GLOBAL]\nremote_cache_write = true\n")
    repo.commit("every job writes the shared cache")
    result = repo.review()
    assert result.returncode == 3, result.stdout + result.stderr
    assert "oracle edit: pants.toml (owner: gate controls)" in result.stdout


# --- what CI reads ---------------------------------------------------------------------------


def test_a_red_review_speaks_ci_formats_with_the_failing_input(repo: Repo):
    buggy(repo)
    repo.edit(ORACLE, '"""The oracle:', '"""The oracle (reworded):')
    repo.commit("bug, and an oracle edit")
    files = {
        option: repo.root.parent / name
        for option, name in (("--junit-xml", "junit.xml"), ("--sarif", "review.sarif"), ("--summary", "summary.md"))
    }
    result = repo.review(
        extra=(*(arg for option, path in files.items() for arg in (option, str(path))), "--format", "github")
    )
    assert result.returncode == 1, result.stdout + result.stderr
    shrunk = '{"claimed_total":0,"lines":[{"price":0,"qty":4}]}'
    annotations = result.stdout.splitlines()
    assert any(
        line.startswith("::error file=tests/properties/orders_props.py,") and f"Failing input: {shrunk}" in line
        for line in annotations
    ), annotations
    assert f"::warning title=witness-gate::oracle edit: {ORACLE} (owner: suite orders (properties))" in annotations
    assert annotations[-1].startswith("review: blocked (exit 1;")
    suites = ElementTree.parse(files["--junit-xml"]).getroot().findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["orders", "witness-gate review"]
    [witness_case, _] = suites[0].findall("testcase")
    witness_failure, review_failure = witness_case.find("failure"), suites[1].find("testcase/failure")
    assert witness_failure is not None and review_failure is not None
    assert f"Failing input: {shrunk}" in witness_failure.get("message", "")
    assert "mixed_edit" in (review_failure.text or "")
    [run] = json.loads(files["--sarif"].read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["mixed_edit"] and run["properties"]["verdict"] == "blocked"
    summary = files["--summary"].read_text()
    assert "| orders | prop_order_total_non_negative | **mixed_edit** | 24/24 | deterministic |" in summary
    assert f"`{shrunk}`" in summary and f"- oracle edit: {ORACLE}" in summary


def test_a_green_review_summary_names_each_suite(repo: Repo):
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, line by line."""')
    repo.commit("docstring")
    summary = repo.root.parent / "summary.md"
    result = repo.review(extra=("--summary", str(summary)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "## witness-gate review: pass (exit 0)" in summary.read_text()
    assert "| orders | - | pass | - | - | - | nothing failed |" in summary.read_text()


def test_review_refuses_a_format_ci_reads_from_files(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    result = repo.review(extra=("--format", "sarif"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "witness-gate: error: --format 'sarif': review writes text or github (JUnit, SARIF and Markdown go to files)"
    ]
    assert not (repo.root.parent / "out").exists()


def test_an_out_directory_holding_someone_elses_files_is_refused_and_left_alone(repo: Repo):
    buggy(repo)
    repo.commit("bug")
    out = repo.root.parent / "out"
    out.mkdir()
    (out / "notes.txt").write_text("not the review's\n")
    result = repo.review()
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--out holds files that no earlier run wrote (no review.json)" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert not [p for p in repo.root.parent.iterdir() if ".staging-" in p.name]


def test_a_second_review_into_the_same_out_replaces_the_first_whole(repo: Repo):
    repo.edit(IMPL, '"""The implementation under test: order totals."""', '"""Order totals, line by line."""')
    repo.commit("docstring")
    assert repo.review().returncode == 0
    out = repo.root.parent / "out"
    (out / "orders" / "left-over.json").write_text("{}\n")  # what the first run's directory held besides
    buggy(repo)
    repo.commit("bug")
    assert_red(repo.review(), CAUGHT)
    assert repo.review_json()["verdict"] == "blocked"
    assert not (out / "orders" / "left-over.json").exists()
    assert not [p for p in repo.root.parent.iterdir() if ".staging-" in p.name]


# --- affected suites at once -----------------------------------------------------------


def test_suites_run_at_once_up_to_the_cores_and_the_memory():
    from witness_gate.review import concurrent_suites

    gib = 1 << 30
    assert concurrent_suites(2, 24 * gib) == 2
    assert concurrent_suites(8, 2 * gib) == 4  # 512 MiB a suite
    assert concurrent_suites(4, 100 << 20) == 1  # never fewer than one
    assert concurrent_suites(1, None) == 1  # unknown memory: the cores decide


def test_suites_run_at_the_same_time_and_report_in_declared_order(monkeypatch: pytest.MonkeyPatch):
    import threading

    from witness_gate import review as reviews

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(reviews, "_available_memory", lambda: 24 << 30)
    # Every call waits until all three have started (run one after another, the first wait
    # breaks), then each waits for the one declared after it: they finish c, b, a.
    started = threading.Barrier(3, timeout=20)
    done = {name: threading.Event() for name in "abc"}
    finished = []

    def run(name: str, after: str | None) -> str:
        started.wait()
        if after is not None:
            assert done[after].wait(20)
        finished.append(name)
        done[name].set()
        return name.upper()

    assert reviews._concurrently(run, [("a", "b"), ("b", "c"), ("c", None)]) == ["A", "B", "C"]
    assert finished == ["c", "b", "a"]


# --- a search per reviewed change -------------------------------------------------------


def test_a_base_that_sets_per_change_search_gives_each_change_its_own_search_and_the_same_change_the_same(repo: Repo):
    repo.git("checkout", "-q", "main")
    repo.edit("pyproject.toml", "[tool.witness-gate]\n", "[tool.witness-gate]\nper-change-search = true\n")
    repo.commit("the base opts in")
    repo.branch("patch")
    buggy(repo)
    repo.commit("a bug")
    out = repo.root.parent / "out" / "orders"

    def reviewed() -> tuple[dict, dict[str, bytes]]:
        result = repo.review()
        assert result.returncode == 1, result.stdout + result.stderr
        lock = json.loads((out / "fixture.lock").read_text())
        return lock, {path.name: path.read_bytes() for path in sorted((out / "witnesses").glob("*.json"))}

    lock, witnesses = reviewed()
    assert witnesses
    fixed = seed_schedule(lock["fixture"]["sha256"], lock["generator_version"], len(lock["seed_schedule"]) // 2)
    assert lock["seed_schedule"][: len(fixed)] == fixed  # the fixed schedule always runs, first
    again, _ = reviewed()
    assert again["search_salt"] != lock["search_salt"]  # drawn by each review: nothing an author computes beforehand
    # Anyone can reproduce it from the lock alone: `check` under it writes the same witnesses.
    repo.git("checkout", "-q", "patch")
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "witness_gate",
            "check",
            "--lock",
            str(out / "fixture.lock"),
            "--properties",
            "tests/properties",
            "--out",
            str(repo.root.parent / "again"),
        ],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)},
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert {path.name: path.read_bytes() for path in sorted((repo.root.parent / "again").glob("*.json"))} == witnesses

    assert again["seed_schedule"][: len(fixed)] == fixed and again["seed_schedule"] != lock["seed_schedule"]


# --- failures the base shares ----------------------------------------------------------------------


@pytest.fixture
def buggy_base(tmp_path: Path) -> Repo:
    """A base that already carries the bug (its own suite fails on it)."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    buggy(repo)
    repo.commit("base: the bug lands unnoticed")
    repo.branch("patch")
    return repo


def test_a_patch_that_leaves_a_failure_the_base_shares_unchanged_is_not_blocked_for_it(buggy_base: Repo):
    buggy_base.edit(
        IMPL,
        "def order_total(order: dict) -> int:",
        'def order_total(order: dict) -> int:\n    """The sum of the lines."""',
    )
    buggy_base.commit("a docstring")
    result = buggy_base.review()
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "orders: pre-existing: prop_order_total_non_negative (regression, 24/24 replays" in output
    assert "the base fails this witness the same way, so it is not this patch's regression" in output
    assert "searched no further than this failure" in output
    record = buggy_base.review_json()
    assert record["suites"] == {"orders": "pass"} and record["verdict"] == "pass"
    [row] = record["pre_existing"]["orders"]
    assert (row["assertion_id"], row["label"]) == ("prop_order_total_non_negative", "regression")
    gate = json.loads((buggy_base.root.parent / "out/orders/gate.json").read_text())
    assert gate["verdict"] == "blocked"  # the suite's own record keeps the gate's word


def test_a_patch_that_changes_how_a_shared_witness_fails_is_judged(buggy_base: Repo):
    # The same input fails on both; the head makes it raise instead of returning a wrong total.
    buggy_base.edit(
        IMPL,
        'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)',
        'if line["qty"] > 3:\n        raise ValueError("too many")\n    return line["qty"] * line["price"]',
    )
    buggy_base.commit("large quantities refused")
    result = buggy_base.review()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "orders: regression: prop_order_total_non_negative" in output and "pre-existing" not in output
    assert "pre_existing" not in buggy_base.review_json()
