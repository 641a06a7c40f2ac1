"""JUnit XML, SARIF and GitHub annotations: rendered from real runs and checked for the
fields each consumer requires."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

from conftest import SampleRepo, add_flaky_property
from gate_test import BUG, IMPL, freeze_flake

from witness_gate import formats
from witness_gate.labels import NEXT_STEPS

ORACLE = "tests/properties/orders_props.py"
# The formats render a verdict; how many replays made it does not matter here.
SMALL_PLAN = ("--replays", "2", "--replay-interpreters", "3")


def junit(path) -> ElementTree.Element:
    return ElementTree.fromstring(path.read_bytes())


def test_regression_as_junit_sarif_and_annotations(repo: SampleRepo):
    repo.edit(IMPL, *BUG)
    result = repo.gate(IMPL, extra=("--junit-xml", "out/junit.xml", "--suite", "orders", *SMALL_PLAN))
    assert result.code == 1
    suite = junit(repo.root / "out/junit.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("orders", "2", "2")
    case = suite.findall("testcase")[0]
    assert case.get("classname") == ORACLE and case.get("name", "").startswith("prop_order_total_non_negative[")
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "regression" and "Block the patch" in failure.get("message", "")

    sarif = json.loads(repo.gate(IMPL, extra=("--format", "sarif", *SMALL_PLAN)).stdout)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    [run] = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "witness-gate"
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == set(NEXT_STEPS)
    [finding] = run["results"]
    assert finding["ruleId"] == "regression" and finding["level"] == "error" and finding["message"]["text"]
    location = finding["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == ORACLE
    source_lines = (repo.root / ORACLE).read_text().splitlines()
    assert source_lines[location["region"]["startLine"] - 1].startswith("@witness_gate.property(")

    annotations = repo.gate(IMPL, extra=("--format", "github", *SMALL_PLAN)).stdout.splitlines()
    assert annotations[0].startswith(
        f"::error file={ORACLE},line={location['region']['startLine']},title=witness-gate regression::regression:"
    )
    assert annotations[-1].startswith("gate: blocked")


def test_frozen_flake_is_skipped_in_junit_and_a_notice_on_github(repo: SampleRepo):
    add_flaky_property(repo)
    repo.gate(IMPL)
    freeze_flake(repo)
    passed = repo.gate(IMPL, extra=("--junit-xml", "out/junit.xml", "--format", "github"))
    assert passed.code == 0, passed.stdout + passed.stderr
    suite = junit(repo.root / "out/junit.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    assert passed.stdout.startswith("::notice file=tests/properties/flaky_props.py,")
    assert json.loads(repo.gate(IMPL, extra=("--format", "sarif")).stdout)["runs"][0]["results"] == []


def test_classify_renders_the_same_formats_and_a_mixed_diff_fails_the_verdict_case(repo: SampleRepo):
    assert repo.pin().code == 0 and repo.check().code == 0
    (repo.root / "changed.txt").write_text("")
    result = repo.cli(
        "classify",
        "--lock",
        repo.lock,
        "--witnesses",
        ".artifacts/witnesses",
        "--diff-paths",
        "changed.txt",
        "--junit-xml",
        "out/classify.xml",
        "--format",
        "github",
    )
    assert result.code == 0 and result.stdout.strip().endswith("witnesses)")
    (repo.root / "changed.txt").write_text(f"{IMPL}\n{ORACLE}\n")
    mixed = repo.cli(
        "classify",
        "--lock",
        repo.lock,
        "--witnesses",
        ".artifacts/witnesses",
        "--diff-paths",
        "changed.txt",
        "--junit-xml",
        "out/classify.xml",
        "--format",
        "github",
    )
    assert mixed.code == 1
    assert mixed.stdout.startswith("::error title=witness-gate::mixed_edit")
    suite = junit(repo.root / "out/classify.xml").find("testsuite")
    assert suite is not None
    failure = suite.findall("testcase")[-1].find("failure")
    assert failure is not None and "mixed_edit" in (failure.text or "")


def test_an_unknown_format_is_refused_before_anything_runs(repo: SampleRepo):
    result = repo.gate(extra=("--format", "yaml"))
    assert result.code == 2 and "--format 'yaml'" in result.stderr
    assert not (repo.root / ".artifacts/gate").exists()


def test_classify_refuses_an_unknown_format_and_leaves_no_report(repo: SampleRepo):
    assert repo.pin().code == 0 and repo.check().code == 0
    (repo.root / "changed.txt").write_text("")
    assert repo.classify().code == 0 and repo.report.exists()
    result = repo.cli(
        "classify",
        "--lock",
        repo.lock,
        "--witnesses",
        ".artifacts/witnesses",
        "--diff-paths",
        "changed.txt",
        "--format",
        "xml",
    )
    assert result.code == 2 and "--format 'xml'" in result.stderr
    assert list(repo.report_json()) == ["stale"]  # a stale report must not vouch for this run


def test_annotation_text_is_escaped():
    record = {"witnesses": [], "reasons": ["a%b\nc"], "verdict": "blocked", "exit_code": 1}
    assert formats.github_annotations(record, []) == ["::error title=witness-gate::a%25b%0Ac"]
