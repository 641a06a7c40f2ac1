"""Every artifact the example flows produce, and broken copies of each, judged by three
independent JSON Schema 2020-12 implementations: the runner's own (`jsonschema`),
`check-jsonschema` and Ajv 8 (`ajv/dist/2020` with ajv-formats). Any disagreement is a bug.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import SampleRepo, add_flaky_property
from gate_test import BUG, IMPL, freeze_flake

from support.review_repo import buggy, graph_document, review_repo
from witness_gate import schemas
from witness_gate.errors import WitnessGateError

AJV_DIR = Path(__file__).resolve().parents[1] / "validators"


def produce_artifacts(repo: SampleRepo) -> list[tuple[str, Path]]:
    """(schema name, file) for everything a clean run, a regression and a frozen flake write."""
    produced = []
    for name, changed, edit in [("clean", (), None), ("regression", (IMPL,), BUG)]:
        if edit:
            repo.edit(IMPL, *edit)
        repo.gate(*changed)
        shutil.copytree(repo.root / ".artifacts/gate", repo.root / f"collected/{name}")
    repo.edit(IMPL, BUG[1], BUG[0])
    shutil.rmtree(repo.root / ".artifacts/gate")
    add_flaky_property(repo)
    repo.gate(IMPL)
    freeze_flake(repo, out="collected/freeze.json")
    repo.gate(IMPL)
    shutil.copytree(repo.root / ".artifacts/gate", repo.root / "collected/flake")
    produce_review(repo.root / "review-work", repo.root / "collected/review")
    # The plugin's goal runs under Pants (tests/rules/suites_test.py); its document for the example, as it prints it.
    (repo.root / "collected/suites.json").write_text(
        json.dumps(graph_document("0" * 40), sort_keys=True, separators=(",", ":")) + "\n"
    )
    kinds = {
        "fixture.lock": "lock",
        "classification.json": "report",
        "gate.json": "gate",
        "freeze.json": "freeze",
        "review.json": "review",
        "suites.json": "suites",
    }
    for path in sorted((repo.root / "collected").rglob("*.json")) + sorted((repo.root / "collected").rglob("*.lock")):
        produced.append(("witness" if path.parent.name == "witnesses" else kinds[path.name], path))
    return produced


def produce_review(work: Path, out: Path) -> None:
    """A pull request with the bug, reviewed: review.json and its suite's gate directory."""
    repo = review_repo(work)
    buggy(repo)
    repo.commit("bug")
    done = repo.review()
    assert done.returncode == 1, done.stdout + done.stderr
    shutil.copytree(work / "out", out)


def broken_copies(schema: str, path: Path, out_dir: Path) -> list[tuple[str, Path]]:
    """Copies that violate the schema: a missing required key, an extra key, a wrong type,
    a bad date-time where there is one, and a file that is not JSON."""
    record = json.loads(path.read_text())
    required = json.loads(schemas.schema_text(schema))["required"]
    variants = {
        "missing": {k: v for k, v in record.items() if k != required[-1]},
        "extra": {**record, "unexpected": True},
        "wrong_type": {**record, "schema_version": "1"},
    }
    if "expires_at" in record:
        variants["bad_time"] = {**copy.deepcopy(record), "expires_at": "tomorrow"}
    if schema == "witness":  # the schema's if/then: version 4 exactly with a directory order, 5 with a condition
        unordered = {k: v for k, v in record.items() if k != "directory_order"}
        variants["order_in_version_3"] = {**unordered, "schema_version": 3, "directory_order": 2}
        variants["version_4_without_order"] = {**unordered, "schema_version": 4}
        variants["order_as_listed"] = {**unordered, "schema_version": 4, "directory_order": 0}
        unconditioned = {k: v for k, v in record.items() if k != "condition"}
        variants["version_5_without_condition"] = {**unconditioned, "schema_version": 5}
        variants["version_5_under_the_fixed_environment"] = {**unconditioned, "schema_version": 5, "condition": {}}
    if schema == "suites":  # the path and name patterns' lookaheads, which each engine compiles its own way
        for label, key, value in [
            ("dot_segment", "fixture", "tests/../fixtures/orders.json"),
            ("path_name", "name", "../escape"),
        ]:
            variants[label] = copy.deepcopy(record)
            variants[label]["suites"][0][key] = value
    stem = f"{path.parent.name}-{path.name}"
    copies = []
    for label, variant in variants.items():
        target = out_dir / f"{stem}.{label}.json"
        target.write_text(json.dumps(variant))
        copies.append((schema, target))
    truncated = out_dir / f"{stem}.truncated.json"
    truncated.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    copies.append((schema, truncated))
    return copies


def by_jsonschema(files: list[tuple[str, Path]]) -> dict[str, bool]:
    verdicts = {}
    for schema, path in files:
        try:
            schemas.validate(schema, json.loads(path.read_text()), str(path))
            verdicts[str(path)] = True
        except (WitnessGateError, ValueError):
            verdicts[str(path)] = False
    return verdicts


def assert_exit_code(tool: str, done: subprocess.CompletedProcess, verdicts: dict[str, bool]) -> None:
    """A validator's exit status must say what its output says: 0 when every file is valid,
    1 when one is not (anything else is the tool failing, not judging)."""
    expected = 0 if all(verdicts.values()) else 1
    assert (
        done.returncode == expected
    ), f"{tool} exited {done.returncode}, its output says {expected}: {done.stderr[-2000:]}"


def by_check_jsonschema(files: list[tuple[str, Path]], schema_dir: Path) -> dict[str, bool]:
    grouped = defaultdict(list)
    for schema, path in files:
        grouped[schema].append(str(path))
    verdicts = {}
    for schema, paths in grouped.items():
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "check_jsonschema",
                "-o",
                "json",
                "--schemafile",
                str(schema_dir / f"{schema}.schema.json"),
                *paths,
            ],
            capture_output=True,
            text=True,
        )
        report = json.loads(done.stdout)
        # "parse_errors" is absent when every file parsed.
        failed = {entry["filename"] for entry in report["errors"] + report.get("parse_errors", [])}
        found = {path: path not in failed for path in paths}
        assert_exit_code(f"check-jsonschema ({schema})", done, found)
        verdicts.update(found)
    return verdicts


def install_ajv(work: Path) -> Path:
    npm, node = shutil.which("npm"), shutil.which("node")
    if not (npm and node):
        pytest.fail("node and npm are needed for the Ajv check (on PATH); .ci/run runs where they are")
    shutil.copytree(AJV_DIR, work, ignore=shutil.ignore_patterns("node_modules", "*_test.py"))
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=work, capture_output=True, text=True, env=os.environ
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    return work


def by_ajv(files: list[tuple[str, Path]], schema_dir: Path, work: Path) -> dict[str, bool]:
    done = subprocess.run(
        [
            shutil.which("node") or "node",
            "validate.mjs",
            str(schema_dir),
            *(f"{schema}={path}" for schema, path in files),
        ],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 2: a schema did not compile
    verdicts = json.loads(done.stdout)
    assert_exit_code("Ajv", done, verdicts)
    return verdicts


def test_three_validators_agree_on_every_artifact_and_every_broken_copy(repo: SampleRepo, tmp_path: Path):
    schema_dir = tmp_path / "schemas"
    schema_dir.mkdir()
    for name in schemas.NAMES:
        (schema_dir / f"{name}.schema.json").write_text(schemas.schema_text(name))
    valid = produce_artifacts(repo)
    assert {schema for schema, _ in valid} == set(schemas.NAMES)
    # A witness a search leg found under a directory order (version 4), made from one the
    # example flows wrote, which found theirs as the file system lists.
    [(_, unordered), *_] = [(schema, path) for schema, path in valid if schema == "witness"]
    ordered = tmp_path / "ordered-witness.json"
    ordered.write_text(json.dumps({**json.loads(unordered.read_text()), "schema_version": 4, "directory_order": 7}))
    valid.append(("witness", ordered))
    # And one found under a declared condition (version 5), with and without a directory order.
    for name, extra in [("conditioned", {}), ("conditioned-ordered", {"directory_order": 7})]:
        conditioned = tmp_path / f"{name}-witness.json"
        record = {**json.loads(unordered.read_text()), "schema_version": 5, "condition": {"TZ": "America/New_York"}}
        conditioned.write_text(json.dumps({**record, **extra}))
        valid.append(("witness", conditioned))
    broken_dir = tmp_path / "broken"
    broken_dir.mkdir()
    broken = [copy for schema, path in valid for copy in broken_copies(schema, path, broken_dir)]
    files = valid + broken

    # The command-line validators judge the valid files and the broken ones in separate
    # calls, so each must exit 0 once and 1 once.
    ajv = install_ajv(tmp_path / "ajv")
    python = by_jsonschema(files)
    second = {**by_check_jsonschema(valid, schema_dir), **by_check_jsonschema(broken, schema_dir)}
    third = {**by_ajv(valid, schema_dir, ajv), **by_ajv(broken, schema_dir, ajv)}
    disagreements = [
        (str(path), python[str(path)], second[str(path)], third[str(path)])
        for _, path in files
        if len({python[str(path)], second[str(path)], third[str(path)]}) != 1
    ]
    assert disagreements == []
    assert all(python[str(path)] for _, path in valid)
    assert not any(python[str(path)] for _, path in broken)
    print(
        f"cross-validation: {len(valid)} artifacts and {len(broken)} broken copies; jsonschema, check-jsonschema and "
        "Ajv agree on all"
    )


# --- the formats other tools read: SARIF and the CI workflow ------------------------------


def test_microsofts_sarif_validator_accepts_the_gate_and_review_logs_and_rejects_a_broken_one(
    repo: SampleRepo, tmp_path: Path
):
    from support import sarif_check
    from support.review_repo import buggy, review_repo

    tool = sarif_check.install(tmp_path / "sarif-tool")
    logs = tmp_path / "logs"
    logs.mkdir()
    add_flaky_property(repo)
    repo.edit(IMPL, *BUG)  # a regression and a flake: blocking results of two rules
    red = repo.gate(IMPL, extra=("--format", "sarif"))
    assert red.code == 1, red.stderr
    (logs / "gate.sarif").write_text(red.stdout)
    reviewed = review_repo(tmp_path / "review")
    buggy(reviewed)
    reviewed.commit("a bug")
    result = reviewed.review(extra=("--sarif", str(logs / "review.sarif")))
    assert result.returncode == 1, result.stdout + result.stderr
    for name in ("gate.sarif", "review.sarif"):
        log = json.loads((logs / name).read_text())
        assert log["runs"][0]["results"], name  # something to judge
        assert sarif_check.problems(tool, logs / name) == [], name
    # A consumer that can say no: the same log with a result that names no rule.
    broken = json.loads((logs / "review.sarif").read_text())
    del broken["runs"][0]["results"][0]["ruleId"]
    (logs / "broken.sarif").write_text(json.dumps(broken))
    assert any("SARIF1010" in problem for problem in sarif_check.problems(tool, logs / "broken.sarif"))


def test_the_copyable_workflow_is_a_valid_github_workflow_that_runs_the_copyable_job():
    from witness_gate import __version__

    ci = Path(__file__).resolve().parents[2] / "docs/ci"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(ci / "github-workflow.yml"),
            str(ci / "deep-search.yml"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = (ci / "github-workflow.yml").read_text()
    # The base's copy of the job decides, from a checkout of the base with full history.
    for needed in (
        "pull_request_target:",
        "fetch-depth: 0",
        "persist-credentials: false",
        '.ci/witness-gate-review.sh "${{ github.sha }}" refs/remotes/pull/head',
        "$GITHUB_STEP_SUMMARY",
        "actions/upload-artifact",
        "github/codeql-action/upload-sarif",
        "sarif_file: .artifacts/review.sarif",
    ):
        assert needed in workflow, needed
    job = (ci / "review-job.sh").read_text()
    assert f'version="{__version__}"' in job  # the pinned runner is this release
    for output in (
        "--junit-xml .artifacts/review.xml",
        "--sarif .artifacts/review.sarif",
        "--summary .artifacts/review.md",
    ):
        assert output in job, output  # what the workflow publishes: the summary, the SARIF and all of .artifacts/
    assert "cat .artifacts/review.md >>" in workflow and "path: .artifacts/\n" in workflow
    deep = (ci / "deep-search.yml").read_text()  # the nightly search whose finds go into the corpus
    for needed in (
        "schedule:",
        "--require-hashes",
        ".ci/witness-gate-review.sh",
        "--check-only --max-examples 5000",
        "path: .artifacts/deep/",
    ):
        assert needed in deep, needed
