#!/usr/bin/env bash
# witness-gate's pull-request job for a repository that adopted it (docs/adopt.md): copy
# this file to .ci/witness-gate-review.sh (`.ci/` is a gate control: editing it is an oracle
# edit) and run it from CI as
#
#   WITNESS_GATE_INDEX_URL=https://your.index/simple .ci/witness-gate-review.sh BASE HEAD
#
# in a fresh checkout *of the base* with full history (GitHub: see github-workflow.yml),
# on a machine with CPython 3.11 and Debian's bubblewrap and libfaketime, as root or with
# unprivileged user namespaces. BASE is the pull request's base (e.g. origin/main), HEAD its head commit,
# fetched but never checked out. WITNESS_GATE_INDEX_URL is the package index your team
# names (a PEP 503 simple index of your own, or a proxy of PyPI) that serves witness-gate's
# wheel and the wheels of its dependencies; pip's own PIP_INDEX_URL or PIP_FIND_LINKS (a
# directory of the release's wheels) name one too. Whatever serves them, only the bytes
# pinned below are installed: each by its sha256, binaries only.
#
# It exits with review's status (0 pass, 1 blocked, 3 oracle review, 4 incomplete, 2 bad
# input), but for an oracle review its owners approved (WITNESS_GATE_REVIEWS, below): 0; a
# step before the review that fails (no index named, no CPython 3.11 or bubblewrap, pip, the
# base's Pants or Bazel, a Bazel base without .bazelversion) exits 2 with a line "setup
# failed: ...", never 1, which is a verdict. It leaves in .artifacts/: review/ (review.json
# and each suite's witnesses), review.xml (JUnit), review.sarif (SARIF 2.1.0) and review.md
# (the Markdown summary for the pull request). Where the base has a `pants` launcher, its suites are the
# ones its BUILD files declare, printed by that Pants; where its BUILD files declare
# witness_gate_test targets, the ones its Bazel prints (`bazel` on PATH); otherwise,
# as for a pytest-only repository, review reads them from the base's pyproject.toml.
set -euo pipefail

setup_failed() { echo "setup failed: $*" >&2; exit 2; }
job_started="$(date +%s%N)"
# Seconds from a `date +%s%N` stamp to another (or now), to a tenth: each step says on
# stderr how long it took.
seconds() { local ms=$(( (${2:-$(date +%s%N)} - $1) / 1000000 )); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }

[ $# -eq 2 ] || setup_failed "usage: $0 BASE HEAD"
base="$1"
head="$2"
# The runner is a pinned release, installed where no code of the patch has run: a fresh
# venv outside the checkout. Raise the pin in a pull request of its own, with the pins below.
version="0.4.0"
git() { command git -c core.hooksPath=/dev/null "$@"; }  # no hook a patch committed runs

# This job, the Pants launcher and the build graph are the base's: a head's copy of them
# could say anything.
base_commit="$(git rev-parse --verify --quiet "$base^{commit}")" || setup_failed "the base $base is not a commit here: fetch it first"
if [ "$(git rev-parse HEAD)" != "$base_commit" ]; then
  setup_failed "run the job from a checkout of the base ($base), never from the head's"
fi
if [ -z "${WITNESS_GATE_INDEX_URL:-}" ] && [ -z "${PIP_INDEX_URL:-}" ] && [ -z "${PIP_FIND_LINKS:-}" ]; then
  setup_failed "WITNESS_GATE_INDEX_URL is not set: name the package index that serves witness-gate $version's wheel and its dependencies (the runner is never taken by name from a public index)"
fi
if [ -n "${WITNESS_GATE_REVIEWS:-}" ] && [ -z "${WITNESS_GATE_AUTHOR:-}" ]; then
  setup_failed "WITNESS_GATE_REVIEWS is set but WITNESS_GATE_AUTHOR is not: name the pull request's author (their own approval never counts)"
fi
command -v python3.11 >/dev/null || setup_failed "CPython 3.11 (python3.11) is not on PATH; it runs the runner (GitHub: actions/setup-python)"
command -v bwrap >/dev/null || setup_failed "bubblewrap (bwrap) is not on PATH; it sandboxes the code under test: apt-get install -y --no-install-recommends bubblewrap"
work="$(mktemp -d)" || setup_failed "mktemp -d"
installing=""  # the runner's install while it runs (below): the trap stops its whole group
# Bazel leaves its server running after a command (3 hours idle by default): the job stops
# the one it started (below) once the suites are printed, and the trap whatever way it ends.
bazel_started=""
stop_bazel() { [ -z "$bazel_started" ] || bazel shutdown >&2 || true; bazel_started=""; }
trap '[ -z "$installing" ] || kill -TERM -- "-$installing" 2>/dev/null || true; stop_bazel; rm -rf "$work"' EXIT

# The runner wheel and every wheel it needs, each pinned by sha256; written by
# docs/ci/pin_runner.py of witness-gate from its lockfile and its release wheel.
cat >"$work/runner-requirements.txt" <<'PINS'
witness-gate==0.4.0 \
    --hash=sha256:c486e885479ce102aee2fea52679ab3539e722a9d80faeeaa4ce7e3d56cefb86
annotated-doc==0.0.7 \
    --hash=sha256:6bc31bbbec6dfaaedc1676dbc11dbda96fe22a2b5c400e9ebad113fec44a9dc6
attrs==26.1.0 \
    --hash=sha256:c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309
hypothesis==6.170.17 \
    --hash=sha256:0365d7f00ff5ae2a1ee5c1808ad75c78b21cf8c3185fbbc9b1b1be771abcefb0 \
    --hash=sha256:0bc729aed39f8c5133cd8608278e83d4ef49813e24409d52380a2cdeefb8bb47 \
    --hash=sha256:0d8653b0c4766faea3dc41cdbccc191701c3db42391a46e2895b0549a5b7450a \
    --hash=sha256:0f26fb90279a88e07701fdb78e1c6248187c783b42e3a517682d795314916e25 \
    --hash=sha256:178ab29d6f230caee68f63085b18251e3b85601ffddc6a560714a50cdd288a12 \
    --hash=sha256:1a0cc5e093aa53a3d7f67976eed0eab8ea279dfc71693f330b3ed91f0eaff9f9 \
    --hash=sha256:359cefe0707a531e60d90bb93d0e3b2de254d3896827d61288699239003e1d29 \
    --hash=sha256:371b50645ab33b5ae4d2391d1789aec958d2cd40e8d774fb4f63acb4f0dc3b35 \
    --hash=sha256:7268af5f3f083f02470eb24cd3dfe7778c1051826be9f1488505bed831130be9 \
    --hash=sha256:83725fa8022f45bc972e975d07e45aca63d1d1edf415821d8c28aa6014323cfb \
    --hash=sha256:92b0c34e234e14342e85dd2c85b12370dcd04c2b0fdac9c527aec7022da296ef \
    --hash=sha256:98a71a3ba8d8241a2b1a2f1a0c8fb351e1af0c4aac7ee37d4aadb355b0f1faed \
    --hash=sha256:9ec3e6198377f772fb2ad2d229d362c813cad842d12654b947e5039d4d649136 \
    --hash=sha256:a531587eb939322ee108dfd34df2538cb888a4bb4550d626cd75f46791f5f822 \
    --hash=sha256:abd1e824a35dcb5bbc1f29b6e8a2cfaedc682c5b173335fa3f9979453c54597c \
    --hash=sha256:b053648606d87a3c6cbc387bda67b7c84e6a89e3da63bf1bce5cc5b783155d91 \
    --hash=sha256:ba5757621056597fd71d101357fed17b7f200592ca6050b59bf6733869de9fc5 \
    --hash=sha256:bb6d08789ffdc901f876105f7ed041564857d41c5d4544cc4b5ef24125dad210 \
    --hash=sha256:c92891c83dc6259a5e89eba62bf02ecb845fb0b54c96c3374bdd0fa71c4c820a \
    --hash=sha256:ca99f7f9a3ef1d469c10461d605eff25c3a2043c4a71b93051dd8d947bceeae0 \
    --hash=sha256:d913dcad6bd59a74c5bf6ca4a96460a0a66e4af8b94467b984ade277ea7553a0 \
    --hash=sha256:eb2773f85fa21cbd99a482cdd751b5171041b6f6a2a09654bebd24af5b487683 \
    --hash=sha256:ee364a61222e4393db58c2524eaedb396d86d4991b849e3d28755f251358a481 \
    --hash=sha256:fba207de21c7e7884102646a04500f900a2db342ebc7b9e082881b97b40497b5 \
    --hash=sha256:ff8d1e02c916b7cf3d23f1bf95af558f5d9c7faf2f3195037c5a5ba215072630
iniconfig==2.3.1 \
    --hash=sha256:9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7
jsonschema==4.26.0 \
    --hash=sha256:d489f15263b8d200f8387e64b4c3a75f06629559fb73deb8fdfb525f2dab50ce
jsonschema-specifications==2025.9.1 \
    --hash=sha256:98802fee3a11ee76ecaca44429fda8a41bff98b00a0f2838151b113f210cc6fe
markdown-it-py==4.3.0 \
    --hash=sha256:7aa1511a46c39138de78d9eba92ce47e63124d8003fc98b3a351909e04239efa
mdurl==0.1.2 \
    --hash=sha256:84008a41e51615a49fc9966191ff91509e3c40b939176e643fd50a5c2196b8f8
packaging==26.4 \
    --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
pluggy==1.7.0 \
    --hash=sha256:7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec
pygments==2.21.0 \
    --hash=sha256:2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9
pytest==9.2.0 \
    --hash=sha256:07acdcf88ec174f907dc01af70bf52d49b014bbab03faeeade31c96b18c2e588
referencing==0.37.0 \
    --hash=sha256:381329a9f99628c9069361716891d34ad94af76e461dcb0335825aecc7692231
rich==15.0.0 \
    --hash=sha256:33bd4ef74232fb73fe9279a257718407f169c09b78a87ad3d296f548e27de0bb
rpds-py==2026.9.1 \
    --hash=sha256:0483515261947e4e8b8e1375bf7463e7eb6ccfb3d86e7b554d90cd5285f20f32 \
    --hash=sha256:074a4d198bc34d9a8ea425114fc3ded6d11ec01f6a314a8db67454a5152d8834 \
    --hash=sha256:136a1c3fe4402b7008bc81cb62ee538481795b61a7e83df88dff3b3f02b726ff \
    --hash=sha256:270bdcdaac5d5b6f73c5e22e7e135c7f2a50e789f71d9e241d5be8d90026e19a \
    --hash=sha256:2711d29b653b3bce48a63d18b9c6b53274669e6d6c4094dddeb4d9a0e45128b2 \
    --hash=sha256:3231c4c0e521dafa5be0c9f114ee2c2ad46650836f2d72caa86801950c3e7044 \
    --hash=sha256:3e524c7874ac72884d28e16dd5b8d839fd09e0fe76b020d3fbca23212a7b8c52 \
    --hash=sha256:44b32a7c4f0da3d28af31c259e38ddcff096f855e205ed0671d02fcf44f1ea1c \
    --hash=sha256:4c0d2cb595a420b34d5086db0add011e26e2c09d6a024afbac4228bf8f863a30 \
    --hash=sha256:4cfaf02209061880210819934de2f4f6aa83dc04dafe6770276acc240a56da31 \
    --hash=sha256:56cd8b3f77d7b6812f533b662186a1f28316931166ddc00fb893b1b0db7e9888 \
    --hash=sha256:57492a550a1d88d29d003247e5f78dd8cf04a701fac0e4c8db8745a6d2504e0a \
    --hash=sha256:6b723eb406dec5bc9ec516c73ab9c3239a3284e017f7eb89ee2b3258bd504fb7 \
    --hash=sha256:6beb738155fe8ab8091afdfa5a3226b21c2b1593f1e50ebb90eb25b44dbc0391 \
    --hash=sha256:6eae33003518fd4cb4f83a218d5371469dd3001aa3b87128c005b07762f7fe5e \
    --hash=sha256:761fdae6728ceb99ab182fad2f0cc1e262f610834dc891aea1d1a2a2e634776f \
    --hash=sha256:8171b44a054e5c67fd748ada04187f1250bf35b95f85e52ab64bcf3331a923bb \
    --hash=sha256:839dde845559254f34885267c6878f60d61d5205180226d976fe488d45fa128e \
    --hash=sha256:84a6ecc0c940169190d2c23bd969debd48c94dbc855acd60188a68d71d421608 \
    --hash=sha256:a3dbc5ed9514908d5046107d7b1346bde71eea61de6e0e4919c19354f97e769f \
    --hash=sha256:ab4b2fda7c2b542f7f9d886cc6a838c5079d2b76f72e6081411faba11adde2c9 \
    --hash=sha256:e01b3c878c8641913e688edd1b3f08658c6783d29cf6b826bd3c0d1ae7a1ffaa \
    --hash=sha256:f3d6ed6a98cfd19155996605474982cc470d7601746a6439078f1a5a3fa8b050 \
    --hash=sha256:fda1d96e542c37b6c804547dbf489c129fe7c97183a76a5ec275909ba1a063df
shellingham==1.5.4 \
    --hash=sha256:7ecfff8f2fd72616f7481040475a65b2bf8af90a56c89140852d1120324e8686
sortedcontainers==2.4.0 \
    --hash=sha256:a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0
typer==0.28.0 \
    --hash=sha256:afd18929180b706c5e9a239f53c3c8136903553c0c2d460598bbaa924191d4ab
typing-extensions==4.16.0 \
    --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8
PINS

# The runner installs while the base's Pants (or Bazel) prints the suites: each keeps a core
# busy (Pants mostly builds its rule graph, on one core) and neither reads what the other
# writes. The install runs in a process group of its own, so whatever way the job ends,
# the trap above stops all of it (pip too): the job leaves no process behind.
install_runner() {
  # A venv without pip costs 0.09 s of CPU, one with it 2.6 s (ensurepip installs and
  # byte-compiles a pip): where python3.11 has a pip that can install into another
  # interpreter (--python, pip 22.3), that pip installs into the bare venv. Its version is
  # pip's own answer; anything else (no pip, an older one) takes the venv's own pip.
  local venv=() pip=("$work/runner/bin/pip") how="with the venv's pip (python3.11 has no pip 22.3+)"
  if [[ "$(python3.11 -m pip --version 2>/dev/null)" =~ ^pip\ ([0-9]+)\.([0-9]+) ]] \
      && (( BASH_REMATCH[1] > 22 || (BASH_REMATCH[1] == 22 && BASH_REMATCH[2] >= 3) )); then
    venv=(--without-pip)
    pip=(python3.11 -m pip --python "$work/runner/bin/python")
    how="with python3.11's own pip (22.3 or newer)"
  fi
  # --no-compile: the runner writes the bytecode its workers read itself (hash-checked, and it
  # would replace pip's timestamp pycs), and Python writes the rest as the runner imports it;
  # pip's byte-compiling of every file (Pygments' lexers, most of it) took 1.8 s of 3.2.
  echo "job: installing the runner $how" >"$work/install.how"
  python3.11 -m venv "${venv[@]}" "$work/runner" || { echo "python3.11 -m venv could not create the runner's venv" >"$work/install.failed"; return 1; }
  "${pip[@]}" install --quiet --disable-pip-version-check --require-hashes --only-binary :all: --no-deps --no-compile \
      "${index[@]}" -r "$work/runner-requirements.txt" \
    || { echo "pip could not install the pinned runner $version and its dependencies (above)" >"$work/install.failed"; return 1; }
  "${pip[@]}" check --disable-pip-version-check \
    || { echo "the pinned wheels do not satisfy each other (pip check, above)" >"$work/install.failed"; return 1; }
  date +%s%N >"$work/install.done"
}
index=()
[ -z "${WITNESS_GATE_INDEX_URL:-}" ] || index=(--index-url "$WITNESS_GATE_INDEX_URL")
started="$(date +%s%N)"
set -m  # job control: the install's own process group, for the trap
install_runner </dev/null >"$work/install.log" 2>&1 &
installing=$!
set +m

# The suites the base declares, printed by the base's own Pants, bound to the base commit.
# Where Bazel declares them (a build file of the base names witness_gate_test), the base's
# Bazel prints them, through the rules' own command. Neither: the base's pyproject.toml.
suites=()
if [ -f pants ]; then
  # One goal, then the job is done with Pants: no daemon is left running after it.
  ./pants --no-pantsd witness-gate-suites --output-file="$work/suites.json" :: \
    || setup_failed "the base's ./pants could not print its suites (pants witness-gate-suites, above)"
  echo "job: the base's Pants printed the suites in $(seconds "$started") s" >&2
  suites=(--suites "$work/suites.json")
elif git grep -q -w -e witness_gate_test "$base_commit" -- BUILD BUILD.bazel '*/BUILD' '*/BUILD.bazel'; then
  command -v bazel >/dev/null || setup_failed "bazel is not on PATH; the base's BUILD files declare witness_gate_test targets, which only its Bazel can print (bazel/bootstrap installs Debian's bazel-bootstrap)"
  # The Bazel that prints the suites is the one the base names: GitHub's `bazel` is Bazelisk,
  # which without a .bazelversion fetches the newest Bazel, never the one the rules were tested on.
  [ -f .bazelversion ] || setup_failed "the base's BUILD files declare witness_gate_test targets but it has no .bazelversion: commit one naming the Bazel you run (Bazelisk reads it; witness-gate's rules are tested on 4.2.3)"
  # A server already running for this workspace (a developer's, an earlier step's) is not
  # the job's to stop. A server names its workspace on its command line, which is all this
  # asks: `bazel info server_pid` would start one to answer. (One of another output root
  # for the same workspace counts too: the job then stops nothing.)
  grep -qsazxF -f <(printf -- '--workspace_directory=%s\n' "$(pwd -P)") /proc/[0-9]*/cmdline || bazel_started=1
  bazel run @witness_gate//bazel:suites -- --output-file="$work/suites.json" \
    || setup_failed "the base's bazel could not print its suites (bazel run @witness_gate//bazel:suites, above)"
  echo "job: the base's Bazel printed the suites in $(seconds "$started") s" >&2
  stop_bazel  # the review never asks Bazel: its server's memory is the suites' now
  suites=(--suites "$work/suites.json")
fi

installed=0
wait "$installing" || installed=$?
installing=""
cat "$work/install.how" >&2 2>/dev/null || true  # which pip installs it: never silently
if [ "$installed" -ne 0 ]; then
  cat "$work/install.log" >&2
  setup_failed "$(cat "$work/install.failed" 2>/dev/null || echo "installing the runner failed (exit $installed, above)")"
fi
echo "job: the pinned runner installed in $(seconds "$started" "$(cat "$work/install.done")") s" >&2

# The review, with an emptied environment: no token or variable of the job reaches it,
# and so none reaches the code under test.
mkdir -p .artifacts || setup_failed "mkdir .artifacts"
status=0
reviewing="$(date +%s%N)"
env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work" \
  "$work/runner/bin/witness-gate" review --base "$base" --head "$head" "${suites[@]}" \
  --out .artifacts/review --junit-xml .artifacts/review.xml --sarif .artifacts/review.sarif --summary .artifacts/review.md \
  || status=$?
echo "job: the review took $(seconds "$reviewing") s; the job so far $(seconds "$job_started") s" >&2

# An oracle review (exit 3) is mergeable once the owners of every edited oracle path, by
# the base's CODEOWNERS, approved the reviewed head: with the pull request's reviews in
# WITNESS_GATE_REVIEWS (GitHub's API list), its author in WITNESS_GATE_AUTHOR and, where
# teams own paths, their members in WITNESS_GATE_TEAM_MEMBERS, the job then exits 0. Nothing
# else turns a verdict green.
if [ "$status" -eq 3 ] && [ -n "${WITNESS_GATE_REVIEWS:-}" ]; then
  teams=()
  [ -z "${WITNESS_GATE_TEAM_MEMBERS:-}" ] || teams=(--team-members "$WITNESS_GATE_TEAM_MEMBERS")
  approved=0
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work" \
    "$work/runner/bin/witness-gate" approvals --review .artifacts/review --reviews "$WITNESS_GATE_REVIEWS" \
    --author "$WITNESS_GATE_AUTHOR" "${teams[@]}" >.artifacts/approvals.txt \
    || approved=$?
  cat .artifacts/approvals.txt
  { printf '\n### Oracle approvals\n\n'; sed 's/^/- /' .artifacts/approvals.txt; } >>.artifacts/review.md
  case "$approved" in
    0) status=0 ;;
    1) ;;                   # still waiting for owners: the oracle review's exit 3
    *) exit "$approved" ;;  # the approvals' input was unreadable: 2, as any bad input
  esac
fi
exit "$status"
