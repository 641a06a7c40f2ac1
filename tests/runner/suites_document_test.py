"""Suites declared once, in the build graph: `review --suites` with the document the base's
`pants witness-gate-suites` prints (its production by the real goal is tests/rules/suites_test.py
and tests/e2e/adopt_test.py), and every way around that declaration refused."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from support.review_repo import BUG, GRAPH_BUILD, IMPL, Repo, graph_document as document, review_repo
from witness_gate.suites_document import graph_config
from witness_gate.config import GateConfig, Suite
from witness_gate.errors import WitnessGateError


def encoded(value: dict) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


BASE = "a" * 40


def test_the_graph_is_the_whole_configuration():
    config = graph_config(encoded(document(BASE)), "suites.json", BASE, GateConfig(oracle_prefixes=("elsewhere/",)))
    [suite] = config.suites
    assert suite == Suite(
        "tests.properties",
        "tests/fixtures/orders.json",
        3,
        ("tests/properties/orders_props.py",),
        2,
        100,
        impl=("src/orders_app/__init__.py", "src/orders_app/pricing.py"),
        oracle_paths=("tests/BUILD",),
        oracle_globs=("tests/properties/*.py",),
        import_paths=("src",),
    )
    assert config.oracle_prefixes == ("tests/BUILD", "tests/fixtures/orders.json", "tests/properties/orders_props.py")
    assert config.impl_prefixes == ("src/orders_app/__init__.py", "src/orders_app/pricing.py")
    assert config.import_paths == ("src",) and config.replay_timeout_seconds == 60.0


def test_a_targets_conditions_are_parsed_and_checked_by_the_runner():
    config = graph_config(
        encoded(document(BASE, conditions=["", "SHOP_REGION=US TZ=America/New_York"])),
        "suites.json",
        BASE,
        GateConfig(),
    )
    assert config.suites[0].conditions == ({}, {"SHOP_REGION": "US", "TZ": "America/New_York"})
    with pytest.raises(WitnessGateError, match="suite tests.properties conditions: 'LD_PRELOAD' cannot be declared"):
        graph_config(encoded(document(BASE, conditions=["LD_PRELOAD=/x.so"])), "suites.json", BASE, GateConfig())


def test_a_file_one_target_tests_and_another_targets_oracle_reads_is_oracle():
    shared = document(BASE, impl=["src/orders_app/pricing.py", "tests/fixtures/orders.json"])
    config = graph_config(encoded(shared), "suites.json", BASE, GateConfig())
    assert "tests/fixtures/orders.json" not in config.impl_prefixes


@pytest.mark.parametrize(
    "broken, message",
    [
        (document("b" * 40), "read from commit bbbb"),
        ({**document(BASE), "suites": []}, "declares no witness_properties target"),
        (document(BASE, oracle=["tests/BUILD"]), "not among its oracle paths"),
        (document(BASE, name="../escape"), "/suites/0/name"),
        ({key: value for key, value in document(BASE).items() if key != "commit"}, "'commit' is a required property"),
        # Bazel's //a/b:c and //a:b.c are both a.b.c: one suite's verdict would overwrite the other's.
        (
            {**document(BASE), "suites": document(BASE)["suites"] * 2},
            "two gated targets have the name 'tests.properties'",
        ),
    ],
    ids=["another commit", "no suite", "properties not oracle", "a name that is a path", "no commit", "one name twice"],
)
def test_a_document_that_is_not_the_bases_graph_is_refused(broken: dict, message: str):
    with pytest.raises(WitnessGateError, match=message):
        graph_config(encoded(broken), "suites.json", BASE, GateConfig())


def test_suites_declared_in_pyproject_as_well_are_refused_naming_both():
    pyproject = GateConfig(suites=(Suite("orders", "tests/fixtures/orders.json", 3, ("tests/properties",)),))
    with pytest.raises(WitnessGateError, match=r"both declare suites \(orders there, tests.properties in the graph\)"):
        graph_config(encoded(document(BASE)), "suites.json", BASE, pyproject)


# --- review, from the graph -----------------------------------------------------------


@pytest.fixture
def graph_repo(tmp_path: Path) -> Repo:
    """The orders example declared once, in tests/BUILD: its pyproject.toml declares nothing."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "pyproject.toml").unlink()
    (repo.root / "tests/BUILD").write_text(GRAPH_BUILD)
    repo.commit("the suite declared in BUILD only")
    repo.branch("patch")
    return repo


def review_from_graph(repo: Repo, commit: str | None = None, **changes):
    return repo.review_graph(document(commit or repo.git("rev-parse", "main"), **changes))


def test_a_bug_is_blocked_by_the_suite_the_graph_declares(graph_repo: Repo):
    graph_repo.edit(IMPL, *BUG)
    graph_repo.commit("a bug")
    result = review_from_graph(graph_repo)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "suites: tests.properties (declared in the base's build graph" in output
    assert "tests.properties: regression: prop_order_total_non_negative" in output
    assert graph_repo.review_json()["suites"] == {"tests.properties": "blocked"}


def test_a_property_module_the_head_adds_under_the_graphs_glob_is_an_oracle_edit(graph_repo: Repo):
    # No BUILD edit: the base's `sources=["properties/*.py"]` already takes the new module in
    # under `pants test`, so it is oracle here too, although the base's graph never listed it.
    (graph_repo.root / "tests/properties/lenient_props.py").write_text("# a property module of the head's\n")
    graph_repo.commit("a property module")
    result = review_from_graph(graph_repo)
    output = result.stdout + result.stderr
    assert result.returncode == 3, output
    assert (
        "oracle edit: tests/properties/lenient_props.py (owner: suite tests.properties (matches tests/properties/*.py))"
        in output
    )


def reviewed_with_a_second_declaration(repo: Repo):
    """The base's suite declared in pyproject.toml too, then a bug: the review, refused (exit 2)."""
    (repo.root / "pyproject.toml").write_text(
        '[[tool.witness-gate.suites]]\nname = "orders"\nfixture = "tests/fixtures/orders.json"\ngenerator-version = '
        '3\nproperties = ["tests/properties"]\n'
    )
    repo.commit("a second declaration")
    repo.branch("patch")
    repo.edit(IMPL, *BUG)
    repo.commit("a bug")
    result = repo.review()
    assert result.returncode == 2, result.stdout + result.stderr
    return result


def test_a_base_that_declares_gated_targets_is_not_reviewed_without_its_graph(graph_repo: Repo):
    # The pyproject suite a team kept from before is not a second source of truth review may
    # fall back on: the BUILD declaration is the one `pants test` runs.
    graph_repo.git("checkout", "-q", "main")
    result = reviewed_with_a_second_declaration(graph_repo)
    assert (
        "main: tests/BUILD declare gated targets (witness_properties, witness_gate_test), which only the build graph "
        "describes" in result.stderr
    )
    assert "run `pants witness-gate-suites --output-file=<file> ::` in a clean checkout of the base" in result.stderr
    twice = review_from_graph(graph_repo)
    assert (
        twice.returncode == 2 and "both declare suites (orders there, tests.properties in the graph)" in twice.stderr
    ), twice.stderr


def test_a_base_whose_bazel_build_files_declare_the_suite_is_not_reviewed_from_pyproject(graph_repo: Repo):
    # The same for Bazel: a witness_gate_test in BUILD.bazel is what `bazel test` runs.
    graph_repo.git("checkout", "-q", "main")
    (graph_repo.root / "tests/BUILD").unlink()
    (graph_repo.root / "tests/BUILD.bazel").write_text(
        'load("//bazel:defs.bzl", "witness_gate_test")\nwitness_gate_test(name = "properties", sources = '
        'glob(["properties/*.py"]),'
        ' fixture = ":fx", dependencies = ["//src/orders_app"])\n'
    )
    result = reviewed_with_a_second_declaration(graph_repo)
    assert (
        "main: tests/BUILD.bazel declare gated targets" in result.stderr
        and "run `bazel run @witness_gate//bazel:suites -- --output-file=<file>`" in result.stderr
    )


@pytest.mark.parametrize(
    "path, text, goal",
    [
        ("tests/BUILD", b'witness_properties(name="p")', "pants witness-gate-suites --output-file=<file> ::"),
        ("tests/BUILD.pants", b'witness_properties(name="p")', "pants witness-gate-suites --output-file=<file> ::"),
        (
            "tests/BUILD.bazel",
            b'witness_gate_test(name = "p")',
            "bazel run @witness_gate//bazel:suites -- --output-file=<file>",
        ),
        (
            "tests/BUILD",
            b'witness_gate_test(name = "p")',
            "bazel run @witness_gate//bazel:suites -- --output-file=<file>",
        ),  # Bazel reads BUILD too
        ("tests/BUILD.bazel", b'py_library(name = "p")', None),
        ("src/BUILD", b"python_sources()", None),
    ],
)
def test_which_tool_describes_a_build_files_suites(path: str, text: bytes, goal: str | None):
    from witness_gate.suites_document import declared_by

    assert declared_by(path, text) == goal


def test_a_graph_read_from_the_head_is_refused(graph_repo: Repo):
    graph_repo.edit(IMPL, *BUG)
    graph_repo.commit("a bug")
    result = review_from_graph(graph_repo, commit=graph_repo.git("rev-parse", "patch"))
    assert result.returncode == 2 and "not the base" in result.stderr, result.stdout + result.stderr


# --- only what the pull request can affect, in a tree of its closure ------------------

VAT = """import json
from pathlib import Path

RATE_FILE = Path(__file__).resolve().parents[2] / "data" / "vat.json"  # read, but no target declares it


def with_vat(cents: int) -> int:
    rate = json.loads(RATE_FILE.read_text())["percent"] if RATE_FILE.exists() else None
    if rate is None:
        raise FileNotFoundError(f"{RATE_FILE.name}: the VAT table is missing")
    return cents + cents * rate // 100
"""
VAT_PROPS = """from hypothesis import strategies as st

import witness_gate
from vat.vat import with_vat


@witness_gate.property(payloads=st.integers(min_value=0, max_value=10**6))
def prop_vat_never_lowers_a_price(cents: int) -> bool:
    return with_vat(cents) >= cents
"""
VAT_SUITE = {
    "name": "tests.vat",
    "address": "tests:vat",
    "fixture": "tests/fixtures/orders.json",
    "generator_version": 3,
    "properties": ["tests/vat/vat_props.py"],
    "replays": 2,
    "max_examples": 20,
    "import_paths": ["src"],
    "impl": ["src/vat/__init__.py", "src/vat/vat.py"],  # data/vat.json is not declared
    "oracle": ["tests/BUILD", "tests/fixtures/orders.json", "tests/vat/vat_props.py"],
    "oracle_globs": ["tests/vat/*.py"],
}


@pytest.fixture
def two_suites(graph_repo: Repo) -> Repo:
    graph_repo.git("checkout", "-q", "main")
    for path, text in {
        "src/vat/__init__.py": "",
        "src/vat/vat.py": VAT,
        "data/vat.json": '{"percent": 19}\n',
        "tests/vat/vat_props.py": VAT_PROPS,
    }.items():
        (graph_repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (graph_repo.root / path).write_text(text)
    graph_repo.commit("a second suite")
    graph_repo.branch("patch")
    return graph_repo


def review_two_suites(repo: Repo):
    graph = document(repo.git("rev-parse", "main"))
    graph["suites"].append(VAT_SUITE)
    return repo.review_graph(graph)


def test_a_suite_no_changed_path_reaches_does_not_run(two_suites: Repo):
    (two_suites.root / "scripts").mkdir()
    (two_suites.root / "scripts/release.sh").write_text("echo release\n")
    two_suites.commit("a release script, outside every source root and closure")
    result = review_two_suites(two_suites)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert (
        "tests.vat: unaffected: none of the 1 changed paths is in its closure (5 files), under its source roots "
        "or beside its files"
    ) in output
    assert two_suites.review_json()["suites"] == {"tests.properties": "unaffected", "tests.vat": "unaffected"}
    assert not (two_suites.root.parent / "out" / "tests.vat").exists()


def test_every_change_under_a_suites_source_root_runs_it_and_says_why(two_suites: Repo):
    two_suites.edit(IMPL, *BUG)
    two_suites.commit("a bug in pricing")
    result = review_two_suites(two_suites)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"tests.properties: runs: {IMPL} is in its closure" in output
    assert f"tests.vat: runs: {IMPL} is under its source root src" in output
    suites = two_suites.review_json()["suites"]
    assert (
        suites["tests.properties"] == "blocked" and suites["tests.vat"] != "unaffected"
    )  # it ran (and reads an undeclared file)


def test_a_modified_module_the_closure_loads_by_name_is_not_unaffected(graph_repo: Repo):
    # The base's pricing.py loads a discount plug-in by name (importlib), so the honest graph
    # cannot list it: a modification to it, alone, must still run the suite, with the
    # head's plug-in in its tree.
    graph_repo.git("checkout", "-q", "main")
    (graph_repo.root / "src/orders_app/plugins").mkdir()
    (graph_repo.root / "src/orders_app/plugins/__init__.py").write_text("")
    (graph_repo.root / "src/orders_app/plugins/discount.py").write_text(
        "def discount(line: dict) -> int:\n    return 0\n"
    )
    (graph_repo.root / IMPL).write_text(
        (graph_repo.root / IMPL)
        .read_text()
        .replace(
            'return line["qty"] * line["price"]',
            'return line["qty"] * line["price"] - __import__("importlib").import_module("orders_app.plugins." + '
            '"discount").discount(line)',
        )
    )
    graph_repo.commit("a discount plug-in, loaded by name")
    graph_repo.branch("patch")
    (graph_repo.root / "src/orders_app/plugins/discount.py").write_text(
        'def discount(line: dict) -> int:\n    return 1 if line["qty"] > 3 else 0\n'
    )
    graph_repo.commit("the plug-in, with a bug")
    result = review_from_graph(graph_repo)
    assert merged_total(graph_repo) == 19
    assert result.returncode == 1, verdict(result)
    assert "runs: src/orders_app/plugins/discount.py is under its source root src" in verdict(result)


def test_a_suite_runs_in_a_tree_of_its_closure_and_cannot_read_what_it_does_not_declare(two_suites: Repo):
    # The VAT module reads data/vat.json, which its target does not declare: under `pants
    # test` the file is not in the sandbox, and in review it is not in the suite's tree. So a
    # change to that file (unowned, "read by nobody") can never be what a passing suite read.
    # The base's own tree lacks it too: the failure is the base's (its declaration's) debt,
    # set aside and said, not this comment's regression.
    two_suites.edit("src/vat/vat.py", "def with_vat", "# reviewed\ndef with_vat")
    two_suites.commit("touch the VAT module")
    result = review_two_suites(two_suites)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "tests.properties: runs: src/vat/vat.py is under its source root src" in output
    assert (
        "tests.vat: regression: prop_vat_never_lowers_a_price" in output and "the VAT table is missing" in output
    ), output
    assert "tests.vat: pre-existing: prop_vat_never_lowers_a_price (regression, 24/24 replays" in output, output


def test_a_gate_control_change_runs_every_suite(two_suites: Repo):
    (two_suites.root / ".github").mkdir()
    (two_suites.root / ".github/CODEOWNERS").write_text("* @acme\n")
    two_suites.commit("a control")
    result = review_two_suites(two_suites)
    output = result.stdout + result.stderr
    assert result.returncode == 3, output
    assert "unaffected" not in output


# --- attacks on the selection and the closure trees (an adversarial review's cases) ----
# Each asserts the safe outcome; each went green (review: pass, exit 0, on a real bug)
# before its defence: a file the head adds under a source root, compiled code and
# submodules refused only in suites that ran, a closure file behind a symlink, and code
# an interpreter runs at start-up.

BUGGY_TOTALS = '''"""Order totals (the head's)."""


def line_total(line: dict) -> int:
    return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)


def order_total(order: dict) -> int:
    return sum(line_total(line) for line in order["lines"])
'''


def merged_total(repo: Repo) -> int:
    """What the landed code computes for an order the property covers (qty 4): 20 when right."""
    repo.git("checkout", "-q", "patch")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from orders_app.pricing import order_total; print(order_total({'lines': [{'qty': 4, 'price': 5}]}))",
        ],
        cwd=repo.root,
        env={**os.environ, "PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def verdict(result) -> str:
    return result.stdout + result.stderr


# --- 1. a new file that changes what the closure's imports resolve to -----------------


def test_a_package_that_shadows_a_tested_module_is_not_unaffected(graph_repo: Repo):
    # src/orders_app/pricing/__init__.py: a directory package wins over pricing.py in the
    # same directory (FileFinder looks for the package first), so `from orders_app.pricing
    # import order_total` runs the head's code. The path is in no closure: every suite
    # "unaffected", and nothing else checks it.
    shadow = graph_repo.root / "src/orders_app/pricing/__init__.py"
    shadow.parent.mkdir()
    shadow.write_text(BUGGY_TOTALS)
    graph_repo.commit("a package beside the module")
    result = review_from_graph(graph_repo)
    assert merged_total(graph_repo) == 19  # the bug is what lands
    assert result.returncode != 0, verdict(result)


OPTIONAL = """

try:  # an optional accelerated implementation, used when present
    from orders_app._speedups import line_total  # noqa: F811
except ImportError:
    pass
"""


def test_an_optional_module_the_closure_imports_that_the_head_adds_is_not_unaffected(graph_repo: Repo):
    # The base's pricing.py imports orders_app._speedups when it exists; it does not in
    # the base, so the honest graph cannot list it. The head adds it.
    graph_repo.git("checkout", "-q", "main")
    (graph_repo.root / IMPL).write_text((graph_repo.root / IMPL).read_text() + OPTIONAL)
    graph_repo.commit("an optional accelerator")
    graph_repo.branch("patch")
    (graph_repo.root / "src/orders_app/_speedups.py").write_text(
        'def line_total(line: dict) -> int:\n    return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)\n'
    )
    graph_repo.commit("the accelerator, with a bug")
    result = review_from_graph(graph_repo)
    assert merged_total(graph_repo) == 19
    assert result.returncode != 0, verdict(result)


# --- 2. compiled code the review only refuses in suites it runs -----------------------


def test_bytecode_beside_a_tested_module_is_blocked_even_when_no_suite_runs(graph_repo: Repo, tmp_path: Path):
    # An unchecked-hash pyc in __pycache__ is loaded instead of pricing.py by every
    # interpreter run with the default --check-hash-based-pycs: the landed code is the bug
    # the diff does not show. `_apply_head` would block it, but only runs for affected suites.
    source = tmp_path / "pricing.py"
    source.write_text(BUGGY_TOTALS)
    cache = graph_repo.root / "src/orders_app/__pycache__" / f"pricing.{sys.implementation.cache_tag}.pyc"
    cache.parent.mkdir()
    py_compile.compile(
        str(source), cfile=str(cache), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True
    )
    graph_repo.git("add", "-f", str(cache))
    graph_repo.commit("bytecode")
    result = review_from_graph(graph_repo)
    assert merged_total(graph_repo) == 19
    assert result.returncode != 0, verdict(result)
    assert "compiled code in the patch" in verdict(result)


# --- 3. a closure file reached through a symlink ---------------------------------------


def pricing_behind_a_link(repo: Repo) -> None:
    """A new base that keeps pricing.py as a link to lib/pricing.py (Pants reads the
    target's bytes as src/orders_app/pricing.py, so the honest graph lists that path)."""
    repo.git("checkout", "-q", "main")
    (repo.root / "lib").mkdir()
    (repo.root / IMPL).rename(repo.root / "lib/pricing.py")
    (repo.root / IMPL).symlink_to("../../lib/pricing.py")
    repo.commit("pricing lives in lib/")
    repo.branch("patch")


def test_the_real_file_behind_a_symlinked_closure_module_is_not_unaffected(graph_repo: Repo):
    # The real file is in no closure list: were links not followed, the suite would be unaffected.
    pricing_behind_a_link(graph_repo)
    graph_repo.edit("lib/pricing.py", *BUG)
    graph_repo.commit("a bug in the real file")
    result = review_from_graph(graph_repo)
    assert merged_total(graph_repo) == 19
    assert result.returncode != 0, verdict(result)


def test_a_symlinked_closure_module_at_an_honest_base_can_be_reviewed(graph_repo: Repo):
    # An honest change that makes the suite run: its closure-only tree needs the link's target.
    pricing_behind_a_link(graph_repo)
    (graph_repo.root / "src/orders_app/__init__.py").write_text("# touched\n")
    graph_repo.commit("touch the package")
    result = review_from_graph(graph_repo)
    assert result.returncode == 0, verdict(result)


# --- 4. the forked replay's result pipe: the one message path left unsigned ----------

FORGING_PRICING = '''"""Order totals (the head's): a bug that reports "no failure" from every forked replay."""

import json
import os
import stat

_HOME = os.getpid()


def _forge() -> None:
    try:
        request = json.load(open("/run/witness-gate/request.json"))
        protocol = request["protocol_fd"]
    except Exception:
        return
    for fd in range(3, 64):
        if fd == protocol:
            continue
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b'{"evidence": null}')
        except OSError:
            pass
    os._exit(0)


def line_total(line: dict) -> int:
    if os.getpid() != _HOME:  # a forked replay child
        _forge()
    return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)


def order_total(order: dict) -> int:
    return sum(line_total(line) for line in order["lines"])
'''


def test_a_deterministic_bug_that_forges_its_forked_replays_is_still_a_regression(graph_repo: Repo):
    (graph_repo.root / IMPL).write_text(FORGING_PRICING)
    graph_repo.commit("a bug that forges its replays")
    result = review_from_graph(graph_repo)
    output = verdict(result)
    assert result.returncode == 1, output
    rows = json.loads((graph_repo.root.parent / "out/tests.properties/classification.json").read_text())["witnesses"]
    assert rows and {row["label"] for row in rows} == {"regression"}, output
    # The forged "no failure" from each forked replay does not verify, so the evidence is
    # not a failure that only shows after history.
    assert {row["cause"] for row in rows} == {"deterministic"}, [row["reason"] for row in rows]


# --- 5. more of the same: what `_apply_head` refuses, when no suite runs -------------


def test_a_submodule_the_head_adds_among_the_sources_is_blocked_even_when_no_suite_runs(graph_repo: Repo):
    commit = graph_repo.git("rev-parse", "main")
    graph_repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit},src/orders_app/vendored")
    graph_repo.git("commit", "-q", "-m", "a submodule")
    result = review_from_graph(graph_repo)
    assert result.returncode != 0, verdict(result)


SITECUSTOMIZE = """import importlib.abc, importlib.machinery, sys


class _Patch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "orders_app.pricing":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = spec.loader
        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                loader.exec_module(module)
                module.line_total = lambda line: line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)
        spec.loader = Loader()
        return spec


sys.meta_path.insert(0, _Patch())
"""


def test_a_sitecustomize_on_the_import_path_is_not_unaffected(graph_repo: Repo):
    (graph_repo.root / "src/sitecustomize.py").write_text(SITECUSTOMIZE)
    graph_repo.commit("a sitecustomize")
    result = review_from_graph(graph_repo)
    # With PYTHONPATH=src (site enabled), every interpreter loads it at startup.
    graph_repo.git("checkout", "-q", "patch")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from orders_app.pricing import order_total; print(order_total({'lines': [{'qty': 4, 'price': 5}]}))",
        ],
        cwd=graph_repo.root,
        env={**os.environ, "PYTHONPATH": "src"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "19"
    assert result.returncode != 0, verdict(result)


# --- control: the same shadowing package against a pyproject-declared base -----------


def test_control_the_shadowing_package_is_caught_when_the_suite_runs(tmp_path: Path):
    repo = review_repo(tmp_path)
    shadow = repo.root / "src/orders_app/pricing/__init__.py"
    shadow.parent.mkdir()
    shadow.write_text(BUGGY_TOTALS)
    repo.commit("a package beside the module")
    result = repo.review()
    assert result.returncode == 1, verdict(result)


def test_control_sitecustomize_against_a_pyproject_base(tmp_path: Path):
    repo = review_repo(tmp_path)
    (repo.root / "src/sitecustomize.py").write_text(SITECUSTOMIZE)
    repo.commit("a sitecustomize")
    result = repo.review()
    assert result.returncode != 0, verdict(result)


def test_a_base_with_a_symlink_loop_among_the_closure_files_is_refused_before_links_are_followed(graph_repo: Repo):
    # Following the closure's links (above) resolves each one in the base's tree; a link that
    # leads to itself never gets there: exporting the base refuses it, naming it (the base is
    # the team's own, so a refusal, exit 2, not a verdict on the patch).
    graph_repo.git("checkout", "-q", "main")
    (graph_repo.root / "src/orders_app/rates.py").symlink_to("rates.py")
    graph_repo.commit("a self-link among the closure's files")
    graph_repo.branch("patch")
    graph_repo.edit(IMPL, *BUG)
    graph_repo.commit("a bug")
    result = review_from_graph(
        graph_repo, impl=["src/orders_app/__init__.py", "src/orders_app/pricing.py", "src/orders_app/rates.py"]
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, verdict(result)
    assert "src/orders_app/rates.py: a committed symlink loop is refused" in result.stderr, verdict(result)


@pytest.mark.parametrize(
    "pyproject, refusal",
    [
        (None, "the base has no pyproject.toml and no gated target: nothing declares what to gate"),
        (
            '[tool.witness-gate]\nimport-paths = ["src"]\n',
            "[[tool.witness-gate.suites]] declares no suite: nothing to gate",
        ),
    ],
    ids=["no pyproject.toml", "no suite in it"],
)
def test_a_base_that_declares_no_suite_anywhere_is_refused(tmp_path: Path, pyproject: str | None, refusal: str):
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    if pyproject is None:
        (repo.root / "pyproject.toml").unlink()
    else:
        (repo.root / "pyproject.toml").write_text(pyproject)
    repo.commit("a base that gates nothing")
    repo.branch("patch")
    repo.edit(IMPL, *BUG)
    repo.commit("a bug")
    result = repo.review()
    assert result.returncode == 2 and refusal in result.stderr, verdict(result)
