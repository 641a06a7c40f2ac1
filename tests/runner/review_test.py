"""The pull-request gate against a patch that wants to be green, through the real
`witness-gate review` from a committed base: the honest patches (an implementation fix
passes, an oracle-only change goes to its own review), then the attacks found after the
catalogued routes of review_routes_test.py (refs and local git state, symlinks, a stale
head, the remote cache), what CI reads, affected suites, a search per change, and the
failures a base already has.

The base is the orders example with its suite declared in pyproject.toml; each attack puts
the same deterministic bug into the implementation and must end red with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from xml.etree import ElementTree

import pytest

from support.review_repo import CAUGHT, IMPL, ORACLE, WEAKEN, Repo, assert_red, buggy, review_repo, strategies_as_helper
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
        strategies_as_helper(repo, "lib/strategies")
        os.symlink("../lib/strategies", repo.root / "tests/strategies")
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
