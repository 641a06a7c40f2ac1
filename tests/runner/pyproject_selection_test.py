"""Affected-only for suites declared in pyproject.toml (#41, item 3): a suite runs unless its
closure, read from the sources of the base's and the landed tree, shows no changed path can
reach it (`selection.pyproject_closure`, `selection.pyproject_selection`).

The attacks are a pull request's author's, with only commits to the head: each tries to get
the suite `pkg000` skipped while what it runs changed, and must find it run. Tables of the
pure selection over trees written here; nothing runs, no git."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from support.review_repo import BUG, review_repo
from witness_gate import oracle_imports
from witness_gate.config import GateConfig, Suite
from witness_gate.ownership import own
from witness_gate.selection import links_among, pyproject_closure, pyproject_selection

CONFIG = GateConfig(
    impl_prefixes=("src/",),
    oracle_prefixes=("props/", "fixtures/"),
    import_paths=("src",),
    suites=tuple(Suite(f"pkg00{n}", "fixtures/accounts.json", 1, (f"props/pkg00{n}_props.py",)) for n in range(2)),
)
PROPS = "import witness_gate\nfrom hypothesis import strategies as st\n\nfrom pkg00{n}.ledger import balance\n"
BASE = {
    "pyproject.toml": "[tool.witness-gate]\n",
    "README.md": "# shop\n",
    "fixtures/accounts.json": "[]\n",
    **{f"props/pkg00{n}_props.py": PROPS.format(n=n) for n in range(2)},
    **{f"src/pkg00{n}/__init__.py": "" for n in range(2)},
    "src/pkg000/ledger.py": (
        "from ..shared.rates import RATE\n\n\ndef balance(entries):\n    return RATE * len(entries)\n"
    ),
    "src/pkg001/ledger.py": "def balance(entries):\n    return len(entries)\n",
    "src/shared/__init__.py": "",
    "src/shared/rates.py": "RATE = 1\n",
    "src/calendar.py": "# the shop's opening hours, a module named like the standard library's\n",
    "src/hooks.pth": "",
    "data/rates.csv": "1\n",
    "scripts/tool.py": "print('a tool')\n",
}


def write(root: Path, files: dict[str, str | None]) -> None:
    """Writes `files` under `root` (None deletes; "-> target" makes a symlink)."""
    for path, text in files.items():
        target = root / path
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if text is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("-> "):
            os.symlink(text[3:], target)
        else:
            target.write_text(text)


def select(tmp_path: Path, head: dict[str, str | None], base: dict[str, str | None] | None = None) -> dict:
    """Each suite's (runs, why) for a head that changes `head` on a base of BASE and `base`."""
    base_tree, landed = tmp_path / "base", tmp_path / "landed"
    write(base_tree, {**BASE, **(base or {})})
    shutil.copytree(base_tree, landed, symlinks=True)
    write(landed, head)
    ownership = own(sorted(head), CONFIG, {})
    return {
        suite.name: pyproject_selection(
            replace(
                pyproject_closure([base_tree, landed], suite, CONFIG),
                links=links_among(ownership, [base_tree, landed]),
            ),
            ownership,
        )
        for suite in CONFIG.suites
    }


def test_a_change_runs_the_suites_it_reaches_and_says_why_the_others_do_not(tmp_path: Path):
    selected = select(tmp_path, {"src/pkg000/ledger.py": "def balance(entries):\n    return 0\n"})
    assert selected["pkg000"] == (True, "runs: src/pkg000/ledger.py is in its closure")
    assert selected["pkg001"] == (
        False,
        "unaffected: none of the 1 changed paths is in its closure (4 files, found from its imports), where its "
        "imports look, beside its files, or a new top-level module",
    )


def test_a_change_no_closure_reaches_runs_none_and_a_gate_control_runs_every_suite(tmp_path: Path):
    assert [runs for runs, _ in select(tmp_path / "docs", {"README.md": "# the shop\n"}).values()] == [False, False]
    selected = select(tmp_path / "job", {".ci/run": "#!/bin/sh\n"})  # reached by nothing else
    assert selected["pkg001"] == (True, "runs: .ci/run changed (gate controls), which every suite depends on")
    selected = select(tmp_path / "control", {"pyproject.toml": "[tool.witness-gate]\nreplays = 1\n"})
    assert selected["pkg001"] == (True, "runs: pyproject.toml changed (gate controls), which every suite depends on")


# --- attacks: each change reaches what pkg000 runs, and pkg000 must run -------------------
# (head, extra base files, the reason's words). The rule each one needs is in its comment.
ATTACKS: dict[str, tuple[dict[str, str | None], dict[str, str | None], str]] = {
    # An import added to a closure module: the changed module, and what the landed tree imports.
    "an import added to a closure module": (
        {"src/pkg000/ledger.py": "import fastmath\n" + BASE["src/pkg000/ledger.py"], "src/fastmath.py": ""},
        {},
        "src/fastmath.py is in its closure",  # read from the landed tree
    ),
    # Imports followed through relative ones, into another package (src/shared/, not beside pkg000).
    "a relative import's module": ({"src/shared/rates.py": "RATE = 2\n"}, {}, "is in its closure"),
    # Where imports look: a module the head adds beside a namespace package wins over it.
    "a module shadowing a namespace package": (
        {"src/shared.py": "RATE = 2\n"},
        {"src/shared/__init__.py": None},
        "src/shared.py is",  # where the base's import looks, and a module of the landed tree's closure
    ),
    # A stdlib name under an import path: the standard library's own imports find it first.
    "a module named like the standard library's": (
        {"src/calendar.py": "import os\nos.environ['TZ'] = 'Pacific/Apia'\n"},
        {},
        "as calendar, a module of the standard library it would shadow",
    ),
    # A top-level name the base did not have: a third-party package's optional import finds it.
    "a new top-level module": ({"src/simplejson.py": "dumps = repr\n"}, {}, "adds simplejson under import path src"),
    # A module named in a string: what static reading cannot follow runs the suite.
    "an import hidden in a string passed to importlib": (
        {"src/plugins/fast.py": "def rate():\n    return 2\n"},
        {
            "src/plugins/fast.py": "def rate():\n    return 1\n",
            "src/pkg000/ledger.py": "import importlib\n\nRATE = importlib.import_module('plugins.fast').rate()\n",
        },
        "src/pkg000/ledger.py, line 1: import importlib",
    ),
    # A package's submodules a star import may load (its __all__): beside the package's __init__.py.
    "a star import's package": (
        {"src/extras/fast.py": "RATE = 2\n"},
        {
            "src/extras/__init__.py": "__all__ = ['fast']\n",
            "src/extras/fast.py": "RATE = 1\n",
            "src/pkg000/ledger.py": "from extras import *\n",
        },
        "is beside a file of its closure",
    ),
    # The real file behind a symlinked closure module.
    "a symlink's target": (
        {"lib/ledger.py": "def balance(entries):\n    return 0\n"},
        {"lib/ledger.py": "def balance(entries):\n    return 1\n", "src/pkg000/ledger.py": "-> ../../lib/ledger.py"},
        "lib/ledger.py is in its closure",
    ),
    # A data file beside the code (package data): beside a closure file.
    "a data file beside the code": ({"src/pkg000/rates.json": "[2]\n"}, {}, "is beside a file of its closure"),
    # A data file elsewhere, read by a path built from the module's own: what reads files runs the suite.
    "a data file the code reads": (
        {"data/rates.csv": "2\n"},
        {"src/pkg000/ledger.py": "import pathlib\n\nRATE = (pathlib.Path(__file__).parents[2] / 'data/rates.csv')\n"},
        "line 1: import pathlib",
    ),
    # A library that reads templates from a directory it is given by name: not a pure module.
    "a template a library reads by a directory's name": (
        {"templates/invoice.txt": "{{ total - 1 }}\n"},
        {
            "templates/invoice.txt": "{{ total }}\n",
            "src/pkg000/ledger.py": "from jinja2 import Environment, FileSystemLoader\n\n"
            "TEMPLATES = Environment(loader=FileSystemLoader('templates'))\n",
        },
        "line 1: from jinja2 import Environment",
    ),
    # Readers no list of readers names (an adversarial review's finds): a module's location as
    # an attribute, a reader by a computed dotted name, a walk and a raw file object.
    "a data file found through a package's __file__": (
        {"src/data/rates.xml": '<rates surcharge="1"/>\n'},
        {
            "src/data/rates.xml": '<rates surcharge="0"/>\n',
            "src/pkg000/ledger.py": "import xml.etree.ElementTree as ET\nimport pkg000\n\n"
            "RATES = pkg000.__file__.rpartition('/')[0] + '/../data/rates.xml'\n",
        },
        "line 1: import xml.etree.ElementTree",
    ),
    "a plug-in pydoc.locate finds by name": (
        {"src/plugins/rounding.py": "def adjust(v):\n    return v + 1\n"},
        {
            "src/plugins/rounding.py": "def adjust(v):\n    return v\n",
            "src/pkg000/ledger.py": "from pydoc import locate\n\nADJUST = locate('plugins.rounding.adjust')\n",
        },
        "line 1: from pydoc import locate",
    ),
    "a file os.fwalk and io.FileIO read": (
        {"config/rates.cfg": "1\n"},
        {
            "config/rates.cfg": "0\n",
            "src/pkg000/ledger.py": "import io\nimport os\n\n"
            "RATE = [io.FileIO(os.path.join(t, 'rates.cfg')).readlines() for t, _, n, _ in os.fwalk('.') if n]\n",
        },
        "line 1: import io",
    ),
    "a module's location through an object it exports": (
        {"data/rates.csv": "2\n"},
        {"src/pkg000/ledger.py": "from ..shared import rates\n\nWHERE = rates.__spec__.origin\n"},
        "line 3: .__spec__",
    ),
    # A symlink on the way to the code, re-pointed: the link is the changed path, its target unchanged.
    "a re-pointed link to a package": (
        {"src/pkg000": "-> ../impl/v2"},
        {
            "impl/v1/__init__.py": "",
            "impl/v1/ledger.py": "def balance(entries):\n    return 1\n",
            "impl/v2/__init__.py": "",
            "impl/v2/ledger.py": "def balance(entries):\n    return 0\n",
            "src/pkg000/__init__.py": None,
            "src/pkg000/ledger.py": None,
            "src/pkg000": "-> ../impl/v1",
        },
        "src/pkg000 is a symbolic link",
    ),
    "a re-pointed link in the middle of a chain": (
        {"impl/current": "-> v2"},
        {
            "impl/v1/ledger.py": "def balance(entries):\n    return 1\n",
            "impl/v2/ledger.py": "def balance(entries):\n    return 0\n",
            "impl/current": "-> v1",
            "src/pkg000/ledger.py": "-> ../../impl/current/ledger.py",
        },
        "impl/current is a symbolic link",
    ),
    "a re-pointed import path": (
        {"src": "-> packages/v2"},
        {
            **{
                f"packages/{v}/{path[4:]}": text
                for v in ("v1", "v2")
                for path, text in BASE.items()
                if path.startswith("src/")
            },
            "packages/v2/pkg000/ledger.py": "def balance(entries):\n    return 0\n",
            **{path: None for path in BASE if path.startswith("src/")},
            "src": "-> packages/v1",
        },
        "src is a symbolic link",
    ),
    # pytest runs a conftest.py before a pytest module: its suite's closure cannot be read.
    "a conftest.py": (
        {"README.md": "# the shop\n"},  # any change: conftest.py alone decides
        {
            "props/pkg000_props.py": "from hypothesis import given\n\nfrom pkg000.ledger import balance\n",
            "props/conftest.py": "import sys\n",
        },
        "props/conftest.py: code pytest runs at collection",
    ),
    # Start-up code under an import path (blocked anyway, whether or not a suite runs).
    "a .pth under an import path": ({"src/hooks.pth": "import evil\n"}, {}, "is code an interpreter loads"),
    "a sitecustomize.py under an import path": (
        {"src/sitecustomize.py": "import evil\n"},
        {},
        "is code an interpreter loads",
    ),
    # A deleted closure module: the base's tree still lists it.
    "a deleted module": ({"src/shared/rates.py": None}, {}, "src/shared/rates.py is in its closure"),
    # A renamed module: both sides of the rename are changed paths.
    "a renamed module": (
        {"src/shared/rates.py": None, "src/shared/rates_v2.py": "RATE = 2\n"},
        {},
        "is in its closure",
    ),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_on_the_selection_still_runs_the_suite(tmp_path: Path, attack: str):
    head, base, words = ATTACKS[attack]
    runs, why = select(tmp_path, head, base)["pkg000"]
    assert runs, why
    assert words in why, why


# --- the reader of what hides a module's reach ------------------------------------------


@pytest.mark.parametrize(
    "source, construct",
    [
        ("import importlib\n", "import importlib"),
        ("from importlib import resources\n", "from importlib import"),
        ("from importlib.metadata import entry_points\n", "from importlib.metadata import"),
        ("x = __import__('os')\n", "__import__"),
        ("exec('import os')\n", "exec"),
        ("eval('1')\n", "eval"),
        ("code = compile('1', 'f', 'eval')\n", "compile"),
        ("import pkgutil\n", "import pkgutil"),
        ("import runpy\n", "import runpy"),
        ("import pkg_resources\n", "import pkg_resources"),
        ("data = open('rates.csv')\n", "open"),
        ("import pathlib\n", "import pathlib"),
        ("rates = config.RATES.read_text()\n", ".read_text"),
        ("names = config.os.listdir('.')\n", ".listdir"),
        ("from os import scandir\n", "from os import scandir"),
        ("import os.path\n", "import os.path"),
        ("import io\n", "import io"),
        ("from pydoc import locate\n", "from pydoc import locate"),
        ("import xml.etree.ElementTree\n", "import xml.etree.ElementTree"),
        ("import glob\n", "import glob"),
        ("import sys\n", "import sys"),
        ("f = getattr(config, name)\n", "getattr() with a computed name"),
        ("f = getattr(config, 'listdir')\n", "the string 'listdir'"),
        ("f = operator.attrgetter('__globals__')\n", "the string '__globals__'"),
        ("where = config.__file__\n", ".__file__"),
        ("where = __file__\n", "__file__"),
        ("names = vars(config)\n", "vars"),
        ("names = globals()\n", "globals"),
        ("help(config)\n", "help"),
        ("classes = object.__subclasses__()\n", ".__subclasses__"),
        ("import pandas\n", "import pandas"),
        ("pytest_plugins = ['shop.fixtures']\n", "pytest_plugins"),
        ("from dotenv import load_dotenv\n", "from dotenv import load_dotenv"),
        ("def f(:\n", "it does not parse"),
    ],
)
def test_a_construct_that_hides_what_a_module_reaches_is_named(source: str, construct: str):
    found = oracle_imports.hidden_reach(source.encode())
    assert found is not None and construct in found, found


def test_plain_code_hides_nothing():
    source = (
        b"from __future__ import annotations\nimport json\nfrom collections import Counter\n"
        b"from decimal import Decimal\nfrom hypothesis import strategies as st\nimport witness_gate\n"
        b"from . import rates\nfrom shop.cart import Cart\n\n\n"
        b"class Line:\n    def __init__(self, sku):\n        self.sku = sku\n\n    def __eq__(self, other):\n"
        b"        return isinstance(other, Line) and sorted([self.sku]) == [other.sku]\n\n\n"
        b"def f(x):\n    return json.dumps({'a': len(x), 'b': str(Decimal(1))}) + getattr(x, 'name', '')\n"
    )
    assert oracle_imports.hidden_reach(source, lambda name: name == "shop.cart") is None
    # The same names from outside the tree: a third-party package is not read, so it hides.
    assert "from shop.cart import Cart" in (oracle_imports.hidden_reach(source) or "")
    # A module of the tree named like the standard library's: which one loads is the import path's
    # order, so only a pure one's name passes (the tree's module is read either way).
    assert "import os" in (oracle_imports.hidden_reach(b"import json as j\nimport os\n", lambda name: True) or "")


def test_the_real_review_skips_a_pyproject_suite_no_change_reaches_and_says_why(tmp_path: Path):
    repo = review_repo(tmp_path)
    # A script beside the suite, no closure's (the example's own files are all the suite's).
    (repo.root / "tools").mkdir()
    (repo.root / "tools/report.py").write_text('print("the day\'s orders")\n')
    repo.commit("a script outside every closure")
    result = repo.review()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "orders: unaffected: none of the 1 changed paths is in its closure (4 files" in result.stdout
    assert repo.review_json()["suites"] == {"orders": "unaffected"}


def test_the_real_review_runs_a_suite_whose_package_link_the_head_re_points(tmp_path: Path):
    # The base keeps its package behind a link, and a buggy copy beside it that nothing uses;
    # the head changes only the link. Its target's files are unchanged, so only the link rule
    # (in the review's own selection, not a table) makes the suite run, and block the bug.
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    for version in ("v1", "v2"):
        shutil.copytree(repo.root / "src/orders_app", repo.root / f"impl/{version}/orders_app")
    shutil.rmtree(repo.root / "src/orders_app")
    os.symlink("../impl/v1/orders_app", repo.root / "src/orders_app")
    repo.edit("impl/v2/orders_app/pricing.py", *BUG)
    repo.commit("base: the package behind a link, and an unused copy with a bug")
    repo.branch("patch")
    (repo.root / "src/orders_app").unlink()
    os.symlink("../impl/v2/orders_app", repo.root / "src/orders_app")
    repo.commit("point the package at the copy")
    result = repo.review()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "orders: unaffected" not in result.stdout, result.stdout
    assert "regression: prop_order_total_non_negative" in result.stdout, result.stdout
