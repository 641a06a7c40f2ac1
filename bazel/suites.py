#!/usr/bin/env python3
"""The suites the repository's witness_gate_test targets declare, as the document
`witness-gate review --suites` reads (schemas/suites.schema.json): what `pants
witness-gate-suites` prints for Pants, here from Bazel's own analysis of the targets.

Usage: `bazel run @witness_gate//bazel:suites -- --output-file=FILE` (or, in a checkout of
witness-gate, `bazel/suites.py --output-file=FILE`), in a clean checkout of the base (it
refuses uncommitted changes: the document is bound to the commit). The Bazel command it
runs is `bazel`, or $BAZEL (words, e.g. `bazel --output_user_root=/somewhere`); under
`bazel run` it is the same server, which released its lock before this script started.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

_KIND = 'kind("_witness_gate_test rule", //...)'
_OPTIONS = {"max_freeze_hours": 168, "replay_timeout_seconds": 60}  # the runner's defaults, as under Pants


def run(argv, **kwargs):
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"suites: {shlex.join(argv)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def main(args):
    if len(args) != 1 or not args[0].startswith("--output-file="):
        sys.exit("usage: bazel run @witness_gate//bazel:suites -- --output-file=FILE")
    # `bazel run` starts this script in its runfiles tree: the repository (and a relative
    # FILE) is where it was called.
    if "BUILD_WORKING_DIRECTORY" in os.environ:
        os.chdir(os.environ["BUILD_WORKING_DIRECTORY"])
    output = Path(args[0].split("=", 1)[1])
    if run(["git", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none"]):
        sys.exit(
            "suites: the checkout has uncommitted changes to tracked files, so the graph it would print "
            "is not the commit's: run it in a clean checkout of the base"
        )
    commit = run(["git", "rev-parse", "--verify", "HEAD^{commit}"]).strip()
    bazel = shlex.split(os.environ.get("BAZEL", "bazel"))
    labels = run([*bazel, "query", _KIND, "--output=label"]).split()
    suites = []
    if labels:
        run([*bazel, "build", "--output_groups=witness_gate_suite", *labels])
        bin_dir = Path(run([*bazel, "info", "bazel-bin"]).strip())
        for label in labels:
            package, name = label.lstrip("/").split(":")
            suites.append(json.loads((bin_dir / package / f"{name}.witness-gate" / "suite.json").read_text()))
    places = {key: {suite.pop(key) for suite in suites} for key in ("freezes_dir", "corpus_dir")}
    for key, found in places.items():
        if len(found) > 1:
            sys.exit(
                f"suites: the gated targets read their {key.replace('_', ' ')} from {sorted(found)}: review takes one; "
                "declare them in one package, or give them one directory"
            )
    document = {
        "schema_version": 1,
        "commit": commit,
        **_OPTIONS,
        **{
            key: (found.pop() if found else default)
            for (key, found), default in zip(places.items(), (".witness-gate/freezes", ".witness-gate/corpus"))
        },
        "suites": sorted(suites, key=lambda suite: suite["name"]),
    }
    output.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
