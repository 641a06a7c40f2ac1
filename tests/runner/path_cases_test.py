"""The runner against the path cases it shares with the Pants plugin (tests/paths/cases.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from witness_gate.config import GateConfig
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import own, owner, split_paths
from witness_gate.paths import parse_changed_paths, repo_path_problem

CASES = json.loads((Path(__file__).resolve().parents[1] / "paths" / "cases.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES["repository_paths"], ids=repr)
def test_a_changed_file_line_is_a_repository_path_or_refused_as_the_plugin_refuses_it(case):
    problem = repo_path_problem(case["path"])
    listed = f"a.py\n{case['path']}\nb.py\n".encode()
    if case["problem"] is None:
        assert problem is None
        assert parse_changed_paths(listed, "changed.txt") == ["a.py", case["path"], "b.py"]
    else:
        assert problem is not None and case["problem"] in problem
        with pytest.raises(WitnessGateError, match="^changed.txt: line 2: ") as refused:
            parse_changed_paths(listed, "changed.txt")
        assert case["problem"] in str(refused.value)


@pytest.mark.parametrize("case", CASES["freezes"], ids=repr)
def test_the_freezes_directory_owns_what_lies_inside_it(case):
    config = GateConfig(impl_prefixes=(), oracle_prefixes=(), freezes_dir=case["freezes_dir"])
    assert (own([case["path"]], config, {}).oracle.get(case["path"]) == "freezes") == case["inside"]


@pytest.mark.parametrize("case", CASES["owners"], ids=repr)
def test_the_longest_entry_owns_a_path(case):
    assert owner(case["path"], case["impl"], case["oracle"]) == case["owner"]
    assert split_paths([case["path"]], case["impl"], case["oracle"]) == (
        case["owner"] == "impl",
        case["owner"] == "oracle",
    )
