#!/usr/bin/env bash
# witness-gate's pull-request job for a repository that adopted it (docs/adopt.md): copy
# this file to .ci/witness-gate-review.sh (`.ci/` is a gate control: editing it is an oracle
# edit) and run it from CI as
#
#   .ci/witness-gate-review.sh BASE HEAD
#
# in a fresh checkout *of the base* with full history (GitHub: see github-workflow.yml),
# on a machine with Debian's bubblewrap, as root or with unprivileged user namespaces. BASE
# is the pull request's base (e.g. origin/main), HEAD its head commit, fetched but never
# checked out. It exits with review's status (0 pass, 1 blocked, 3 oracle review, 4
# incomplete, 2 bad input) and leaves in .artifacts/: review/ (review.json and each
# suite's witnesses), review.xml (JUnit), review.sarif (SARIF 2.1.0) and review.md (the
# Markdown summary for the pull request). Suites declared in BUILD files; a repository
# without Pants declares them in pyproject.toml and drops the `pants` line and `--suites`.
set -euo pipefail

base="${1:?usage: $0 BASE HEAD}"
head="${2:?usage: $0 BASE HEAD}"
# The runner is a pinned release, installed where no code of the patch has run: a fresh
# venv outside the checkout. Raise the pin in a pull request of its own.
version="0.4.0"
git() { command git -c core.hooksPath=/dev/null "$@"; }  # no hook a patch committed runs

# This job, the Pants launcher and the build graph are the base's: a head's copy of them
# could say anything.
if [ "$(git rev-parse HEAD)" != "$(git rev-parse --verify "$base^{commit}")" ]; then
  echo "$0: run the job from a checkout of the base ($base), never from the head's" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3.11 -m venv "$work/runner"
"$work/runner/bin/pip" install --quiet "witness-gate==$version"

# The suites the base declares, printed by the base's own Pants, bound to the base commit.
./pants witness-gate-suites --output-file="$work/suites.json" ::

# The review, with an emptied environment: no token or variable of the job reaches it,
# and so none reaches the code under test.
mkdir -p .artifacts
env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work" \
  "$work/runner/bin/witness-gate" review --base "$base" --head "$head" --suites "$work/suites.json" \
  --out .artifacts/review --junit-xml .artifacts/review.xml --sarif .artifacts/review.sarif --summary .artifacts/review.md
