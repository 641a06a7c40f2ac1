#!/usr/bin/env bash
# The changed-file list witness_gate_test reads, on stdout: what the branch changed since
# its merge base with BASE, plus uncommitted and untracked files (what the Pants plugin's
# `[witness-gate].base` computes). Usage, from the repository's root:
#   bazel run @witness_gate//bazel:changed-files -- BASE > .witness-gate/changed.txt
# or, in a checkout of witness-gate, bazel/changed-files.sh BASE > .witness-gate/changed.txt
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: bazel run @witness_gate//bazel:changed-files -- BASE > .witness-gate/changed.txt" >&2
  exit 2
fi
# `bazel run` starts this script in its runfiles tree: the repository is where it was called.
if [ -n "${BUILD_WORKING_DIRECTORY:-}" ]; then
  cd "$BUILD_WORKING_DIRECTORY"
fi
merge_base="$(git merge-base "$1" HEAD)"
# -z, then one path per line: a name with a newline cannot be carried, so it is refused.
paths="$({ git diff -z --name-only --no-renames "$merge_base" --; git ls-files -z --others --exclude-standard; } | tr '\n\0' '\r\n')"
if printf '%s' "$paths" | grep -q $'\r'; then
  echo "changed-files: a changed path contains a newline; the list cannot carry it" >&2
  exit 1
fi
# The list itself is written where the gate reads it: it is no change of the branch; nor
# are the convenience symlinks Bazel leaves at the root (bazel-bin, bazel-out, bazel-<name>).
printf '%s\n' "$paths" | { grep -vx -e '.witness-gate/changed.txt' -e '' || true; } | sort -u | while IFS= read -r path; do
  if [[ "$path" == bazel-* && "$path" != */* && -L "$path" ]]; then
    continue
  fi
  printf '%s\n' "$path"
done
