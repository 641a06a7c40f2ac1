"""The `witness-gate` command: parse, call the library, print, exit.

Exit statuses: 0 pass, 1 blocked (regression, mixed edit, lock in diff, or check found
failures), 2 bad input, 3 oracle review, 4 incomplete evidence. There is no switch
that overrides a verdict.
"""

import signal
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, cast

import typer

from witness_gate.errors import Stopped, WitnessGateError

if TYPE_CHECKING:  # the commands import what they use when they run (start-up is measured)
    from witness_gate.config import GateConfig
    from witness_gate.replay import Progress

app = typer.Typer(
    name="witness-gate",
    help="Classify a shrunk property witness before a failure can be frozen.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from witness_gate import __version__
        from witness_gate.lock import hypothesis_version

        typer.echo(f"witness-gate {__version__} (Hypothesis {hypothesis_version()})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version (and Hypothesis') and exit."
        ),
    ] = False,
) -> None:
    pass  # the app's help is Typer's own (above); this callback only carries --version


Root = Annotated[Path, typer.Option("--root", help="Repository root; recorded paths are relative to it.")]
LockOption = Annotated[Path, typer.Option("--lock", help="The fixture lock written by `pin`.")]
DiffOption = Annotated[
    Path, typer.Option("--diff-paths", help="Changed-file list: one repository path per line, from the diff.")
]
ImplPrefix = Annotated[
    Optional[list[str]],
    typer.Option("--impl-prefix", help="Implementation path prefix (repeatable); overrides pyproject.toml."),
]
OraclePrefix = Annotated[
    Optional[list[str]],
    typer.Option("--oracle-prefix", help="Oracle path prefix (repeatable); overrides pyproject.toml."),
]
FormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        help="Standard output: text, github (workflow annotations), sarif (SARIF 2.1.0) or junit (JUnit XML).",
    ),
]
JunitOption = Annotated[
    Optional[Path], typer.Option("--junit-xml", help="Also write the verdict as JUnit XML to this file.")
]
SaltOption = Annotated[
    Optional[str],
    typer.Option(
        "--search-salt",
        help="A value that draws more search seeds, after the pin's fixed schedule, recorded in the lock. review "
        "draws a fresh random one when the base sets per-change-search.",
    ),
]
ConditionOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--condition",
        help="A production condition to search and replay under, as NAME=VALUE words, e.g. 'TZ=America/New_York' or "
        "'SHOP_REGION=US TZ=UTC' ('' for the defaults); repeatable, searched in order.",
    ),
]
FixtureOption = Annotated[
    Optional[Path], typer.Option("--fixture", help="The fixture file to pin by its bytes (or --no-fixture).")
]
NoFixtureOption = Annotated[
    bool,
    typer.Option(
        "--no-fixture",
        help="The suite has no fixture data (a pytest module that reads its own files, or none): the lock pins "
        "nothing and says so.",
    ),
]
GeneratedOracle = Annotated[
    Optional[list[str]], typer.Option("--generated-oracle", help="Generated path that counts as oracle (repeatable).")
]


# A CI job cancelled sends SIGTERM, a person at a terminal SIGINT: either stops the run cleanly.
_STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _fixture(fixture: Path | None, no_fixture: bool) -> Path | None:
    """The fixture to pin, or None for a suite declared without fixture data; exactly one is said."""
    if (fixture is None) == (not no_fixture):
        raise WitnessGateError(
            "give the fixture to pin (--fixture FILE), or declare that the suite has none (--no-fixture): exactly one"
        )
    return fixture


def _run(action: Callable[[], int]) -> None:
    # The caller's handlers come back afterwards (the CLI may run inside another program).
    earlier = {number: signal.signal(number, _stop) for number in _STOPPING_SIGNALS}
    try:
        code = action()
    except WitnessGateError as error:
        typer.echo(f"witness-gate: error: {error}", err=True)
        raise typer.Exit(error.exit_code) from None
    except Stopped as stop:
        typer.echo(
            f"witness-gate: stopped by {stop.name}: its workers were killed and what it staged removed; its outputs "
            "are "
            "as they were before the run, or this run's whole output if it had already published it",
            err=True,
        )
        raise typer.Exit(128 + stop.signal_number) from None
    finally:
        for number, handler in earlier.items():
            signal.signal(number, handler)
    raise typer.Exit(code)


def _stop(number: int, _frame: object) -> None:
    """A stopping signal: kill the workers (none starts after this) and unwind, so that every
    `finally` removes what the run staged. Later signals are ignored: the unwinding finishes."""
    for other in _STOPPING_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    stop = Stopped(number, signal.Signals(number).name)
    running = sys.modules.get("witness_gate.sandbox")  # not imported: no worker ever started
    if running is not None:
        running.stop_every_worker(stop)
    raise stop


def _emit(
    record: dict[str, Any],
    witness_dir: Path,
    text_lines: list[str],
    output_format: str,
    junit_xml: Path | None,
    suite: str,
) -> None:
    """Prints the verdict in the chosen format and writes the JUnit file, if asked."""
    if output_format == "text" and junit_xml is None:
        for line in text_lines:
            typer.echo(_coloured(line))  # click drops the colour when stdout is not a terminal
        return
    from witness_gate import formats, store, witness

    # The other formats place each witness at its property's source line, which only the
    # witness files record: read them once, here, and only for those formats.
    names = [row["file"].rsplit("/", 1)[-1] for row in record["witnesses"]]
    found = formats.findings(record, witness.index(witness_dir, names))
    if junit_xml is not None:
        store.write_atomic(junit_xml, formats.junit_xml(record, found, suite))
    if output_format == "text":
        for line in text_lines:
            typer.echo(_coloured(line))
    elif output_format == "github":
        for line in formats.github_annotations(record, found):
            typer.echo(line)
        typer.echo(text_lines[-1])
    elif output_format == "sarif":
        sys.stdout.write(formats.sarif_bytes(record, found).decode())
    else:
        sys.stdout.write(formats.junit_xml(record, found, suite).decode())


def _progress() -> "Progress":
    """Replay progress on stderr: a bar on a terminal, plain lines in CI or a pipe."""
    import os

    if sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("true", "1"):
        from rich.progress import Progress

        bar = Progress(transient=True)
        task = bar.add_task("replaying witnesses", total=None)
        bar.start()

        def show(done: int, total: int, module: str) -> None:
            bar.start()  # again after a module's round stopped it; a no-op while running
            bar.update(task, completed=done, total=total, description=f"replaying {module}")
            if done >= total:
                bar.stop()

        return show

    def plain(done: int, total: int, module: str) -> None:
        typer.echo(f"witness-gate: {module}: replay interpreter {done}/{total} done", err=True)

    return plain


_COLOURS = {
    "regression": "red",
    "mixed_edit": "red",
    "blocked": "red",
    "oracle_defect": "magenta",
    "oracle_review": "magenta",
    "flake": "yellow",
    "not_reproduced": "yellow",
    "unclassified": "yellow",
    "incomplete": "yellow",
    "pass": "green",
}


def _coloured(line: str) -> str:
    head, colon, rest = line.partition(":")
    word = rest.split()[0] if head in ("gate", "verdict", "review") and rest.split() else head
    colour = _COLOURS.get(word)
    return line if colour is None or not colon else line.replace(word, typer.style(word, fg=colour, bold=True), 1)


def _check_output_files(**files: Path | None) -> None:
    """Refuses, before anything runs, an output file (`--junit-xml` as junit_xml=...) that the
    run's end would rename over."""
    from witness_gate import store

    for name, path in files.items():
        if path is not None:
            store.check_output_file(path, "--" + name.replace("_", "-"))


def _check_format(output_format: str) -> None:
    from witness_gate.formats import FORMATS

    if output_format not in FORMATS:
        raise WitnessGateError(f"--format {output_format!r}: choose one of {', '.join(FORMATS)}")


def _config(
    root: Path, impl: list[str] | None = None, oracle: list[str] | None = None, generated: list[str] | None = None
) -> "GateConfig":
    from witness_gate.config import load_config

    return load_config(
        root,
        impl_prefixes=tuple(impl or ()),
        oracle_prefixes=tuple(oracle or ()),
        generated_oracle_paths=tuple(generated or ()),
    )


def _conditions(words: list[str] | None) -> tuple[dict[str, str], ...]:
    from witness_gate import conditions

    return conditions.check_matrix(
        (conditions.parse(text, f"--condition {text!r}") for text in words or ()), "--condition"
    )


@app.command()
def pin(
    generator_version: Annotated[
        int, typer.Option("--generator-version", help="Reviewed version of the payload generators.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Where to write the lock.")],
    fixture: FixtureOption = None,
    no_fixture: NoFixtureOption = False,
    replays: Annotated[
        int,
        typer.Option(
            "--replays",
            help="Replays of each witness payload per replay interpreter: a review constant stored in the lock.",
        ),
    ] = 5,
    max_examples: Annotated[int, typer.Option("--max-examples", help="Hypothesis examples per search round.")] = 100,
    search_rounds: Annotated[
        int, typer.Option("--search-rounds", help="Seeds in the schedule, searched in order.")
    ] = 1,
    replay_interpreters: Annotated[
        int,
        typer.Option(
            "--replay-interpreters",
            help="Fresh interpreters per replay round; the hash secret and the process id change in turn from one to "
            "the next.",
        ),
    ] = 6,
    replay_cap: Annotated[
        Optional[int],
        typer.Option(
            "--replay-cap",
            help="Most replays of one payload variant, escalation included (default 150, or one round if larger).",
        ),
    ] = None,
    condition: ConditionOption = None,
    search_salt: SaltOption = None,
    root: Root = Path("."),
) -> None:
    """Pin a fixture: hash its bytes and derive the seed schedule."""

    def action() -> int:
        from witness_gate import lock, schemas, store

        store.check_output_file(out, "--out")
        validator = schemas.prepare_in_background("lock")
        record = lock.pin(
            _fixture(fixture, no_fixture),
            root,
            generator_version,
            replays,
            max_examples,
            search_rounds,
            replay_interpreters,
            replay_cap,
            _conditions(condition),
            search_salt,
        )
        validator.join()
        store.save_artifact(out, "lock", record)
        pinned = record["fixture"]["path"] or "no fixture data (declared so)"
        typer.echo(f"pinned {pinned} sha256 {record['fixture']['sha256']} -> {out}")
        return 0

    _run(action)


def _say_how_confined(replays: bool = True) -> None:
    """Says how the workers are confined; for a command that `replays` witnesses, first
    refuses (exit 2) where the clock probe's libfaketime is missing, before any work."""
    from witness_gate.sandbox import clock_environment, confinement_notice

    if replays:
        clock_environment()
    notice = confinement_notice()
    if notice is not None:
        typer.echo(notice, err=True)


@app.command()
def check(
    lock: LockOption,
    properties: Annotated[Path, typer.Option("--properties", help="Directory of property modules.")],
    out: Annotated[Path, typer.Option("--out", help="Witness directory.")],
    root: Root = Path("."),
) -> None:
    """Search every property with Hypothesis; shrink and retain each failure as a witness.

    Exit 0: no failure; 1: witnesses written, or a property module could not be loaded or run."""

    def action() -> int:
        from witness_gate import check as checks
        from witness_gate import store
        from witness_gate.properties import module_files

        store.check_output_dir(out, "--out")
        config = _config(root)
        _say_how_confined(replays=False)
        result = checks.run(
            lock, module_files(properties), out, root, config.import_paths, config.replay_timeout_seconds
        )
        for path in result.written:
            typer.echo(f"witness: {path}")
        for problem in result.problems:
            typer.echo(f"blocked: {problem}")
        typer.echo(f"checked {result.properties} properties: {len(result.written)} witnesses")
        return 1 if result.written or result.problems else 0

    _run(action)


@app.command()
def classify(
    lock: LockOption,
    witnesses: Annotated[Path, typer.Option("--witnesses", help="Witness directory written by `check`.")],
    diff_paths: DiffOption,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Where to write the classification report; a refused run replaces one already there with a `stale` "
            "record.",
        ),
    ] = Path(".artifacts/classification.json"),
    impl_prefix: ImplPrefix = None,
    oracle_prefix: OraclePrefix = None,
    generated_oracle: GeneratedOracle = None,
    output_format: FormatOption = "text",
    junit_xml: JunitOption = None,
    root: Root = Path("."),
) -> None:
    """Replay each witness under the pin and label it from the counts and the diff.

    Exit 0 pass (flakes only), 1 regression / mixed edit / lock in diff,
    3 oracle defect, 4 not reproduced / unclassified, 2 bad input."""

    def action() -> int:
        _say_how_confined()
        from witness_gate import classification, store

        store.check_output_file(out, "--out")
        _check_output_files(junit_xml=junit_xml)
        try:
            _check_format(output_format)
            record = classification.build(
                lock,
                witnesses,
                diff_paths,
                root,
                _config(root, impl_prefix, oracle_prefix, generated_oracle),
                _progress(),
            )
        except WitnessGateError as error:
            # A stale report must not vouch for this run: it is replaced, never deleted.
            store.mark_stale(out, f"classify refused the run that would have replaced this report: {error}")
            raise
        store.save_artifact(out, "report", record)
        _emit(
            record, witnesses, classification.summary_lines(record), output_format, junit_xml, "witness-gate classify"
        )
        return cast(int, record["exit_code"])

    _run(action)


@app.command()
def freeze(
    assertion: Annotated[str, typer.Option("--assertion", help="Assertion id (the property's name).")],
    witness: Annotated[Path, typer.Option("--witness", help="The witness file to freeze.")],
    failures: Annotated[int, typer.Option("--failures", help="Failing replays, as classify recorded.")],
    runs: Annotated[int, typer.Option("--runs", help="Replays, as classify recorded.")],
    expires_in_hours: Annotated[int, typer.Option("--expires-in-hours", help="Hours until the freeze expires.")],
    lock: Annotated[
        Optional[Path],
        typer.Option(
            "--lock",
            help="The fixture lock written by `pin` (default .artifacts/fixture.lock; with --review, the suite's own).",
        ),
    ] = None,
    report: Annotated[
        Optional[Path],
        typer.Option(
            "--report",
            help="The classification report (default .artifacts/classification.json; with --review, the suite's own).",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Where to write the freeze.")] = Path(".artifacts/freeze.json"),
    root: Root = Path("."),
    review: Annotated[
        Optional[Path],
        typer.Option(
            "--review",
            help="A review's --out directory (the job's artifacts): replay in the tree that review judged, rebuilt "
            "from the git objects of --root's repository (the base and head commits must be there), so it works "
            "from a checkout of the base.",
        ),
    ] = None,
    suite: Annotated[
        Optional[str],
        typer.Option("--suite", help="With --review: the suite whose flake this is (its directory there)."),
    ] = None,
    suites: Annotated[
        Optional[Path],
        typer.Option(
            "--suites",
            help="With --review, where the base declares its suites in BUILD files: the document its own Pants or "
            "Bazel prints in a clean checkout of the base.",
        ),
    ] = None,
) -> None:
    """Write a freeze for one flake witness, bound to assertion, fixture digest and witness hash.

    The witness is replayed first: the freeze is written only when the replays confirm the
    report (the same counts wherever the runner controls the cause, and a flake). Without
    --review it replays in --root's working tree (the tree the gate ran in); with --review,
    in the tree that review judged, rebuilt from git objects and checked against every
    artifact it reads."""

    def action() -> int:
        if review is not None:  # a pull request's code, rebuilt from git: never run outside the sandbox
            from witness_gate.sandbox import require_confinement

            require_confinement("freeze --review")
        _say_how_confined()
        from witness_gate import freeze_source, store

        store.check_output_file(out, "--out")
        flake = freeze_source.Flake(assertion, witness, failures, runs, expires_in_hours)
        record = freeze_source.confirmed(flake, freeze_source.Found(root, lock, report, review, suite, suites))
        store.save_artifact(out, "freeze", record)
        typer.echo(f"freeze: {assertion} witness {record['witness_hash'][:12]} until {record['expires_at']} -> {out}")
        return 0

    _run(action)


@app.command()
def verify(
    lock: LockOption,
    witnesses: Annotated[Path, typer.Option("--witnesses", help="Witness directory.")],
    diff_paths: DiffOption,
    report: Annotated[Path, typer.Option("--report", help="The classification report.")] = Path(
        ".artifacts/classification.json"
    ),
    freeze: Annotated[
        Optional[list[Path]], typer.Option("--freeze", help="A freeze file to check (repeatable).")
    ] = None,
    as_of: Annotated[
        Optional[str],
        typer.Option(
            "--as-of",
            help="Check the freezes' expiry at this later time (ISO 8601 with its zone, e.g. 2026-12-07T09:00:00Z), "
            "not now; never earlier than now.",
        ),
    ] = None,
    root: Root = Path("."),
) -> None:
    """Re-check a classification as a reviewer would: the lock matches the fixture's bytes, each witness
    replays to the same label and counts, the label follows the table for the changed paths, and each
    freeze names its assertion, witness hash and an unexpired time (with --as-of, one that has not
    expired by then). Exit 0 only when every check holds."""

    def action() -> int:
        _say_how_confined()
        from witness_gate import freeze as freezes, verify as verifier

        now = datetime.now(timezone.utc)
        later = freezes.later_moment(as_of, now) if as_of is not None else None
        results = verifier.run(lock, witnesses, report, diff_paths, list(freeze or ()), root, _config(root), now, later)
        for result in results:
            typer.echo(f"{'ok' if result.ok else 'FAIL'}: {result.name}: {result.detail}")
        return 0 if all(result.ok for result in results) else 1

    _run(action)


@app.command()
def gate(
    generator_version: Annotated[
        int, typer.Option("--generator-version", help="Reviewed version of the payload generators.")
    ],
    properties: Annotated[
        list[Path], typer.Option("--properties", help="A property module, or a directory of them (repeatable).")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output directory: fixture.lock, witnesses/, classification.json, gate.json.")
    ],
    diff_paths: Annotated[
        Optional[Path],
        typer.Option("--diff-paths", help="Changed-file list: one repository path per line, from the diff."),
    ] = None,
    impl_paths: Annotated[
        Optional[Path],
        typer.Option(
            "--impl-paths",
            help="File listing the implementation paths (exact, one per line); with --oracle-paths, replaces the "
            "prefixes of pyproject.toml.",
        ),
    ] = None,
    oracle_paths: Annotated[
        Optional[Path], typer.Option("--oracle-paths", help="File listing the oracle paths (exact, one per line).")
    ] = None,
    freezes: Annotated[
        Path, typer.Option("--freezes", help="Directory of freeze files to honour (absent: none).")
    ] = Path(".witness-gate/freezes"),
    replays: Annotated[
        int, typer.Option("--replays", help="Replays of each witness payload per replay interpreter.")
    ] = 5,
    replay_interpreters: Annotated[
        int, typer.Option("--replay-interpreters", help="Fresh interpreters per replay round.")
    ] = 6,
    max_examples: Annotated[int, typer.Option("--max-examples", help="Hypothesis examples per search.")] = 100,
    max_freeze_hours: Annotated[
        Optional[int], typer.Option("--max-freeze-hours", help="Longest freeze honoured; overrides pyproject.toml.")
    ] = None,
    replay_timeout_seconds: Annotated[
        Optional[float], typer.Option("--replay-timeout-seconds", help="Per-replay timeout; overrides pyproject.toml.")
    ] = None,
    check_only: Annotated[
        bool, typer.Option("--check-only", help="Classify nothing, honour no freeze: fail on any witness.")
    ] = False,
    output_format: FormatOption = "text",
    junit_xml: JunitOption = None,
    suite: Annotated[
        str, typer.Option("--suite", help="Test suite name in JUnit XML (e.g. the build target).")
    ] = "witness-gate",
    import_path: Annotated[
        Optional[list[str]],
        typer.Option(
            "--import-path",
            help="Directory (relative to --root) the property modules import the code under test from (repeatable); "
            "overrides pyproject.toml's import-paths.",
        ),
    ] = None,
    condition: ConditionOption = None,
    search_salt: SaltOption = None,
    corpus: Annotated[
        Optional[Path],
        typer.Option(
            "--corpus",
            help="Directory of retained witnesses to replay with this run's (default: corpus-dir of pyproject.toml, "
            "else .witness-gate/corpus; absent: none).",
        ),
    ] = None,
    fixture: FixtureOption = None,
    no_fixture: NoFixtureOption = False,
    artifacts_at: Annotated[
        Optional[Path],
        typer.Option(
            "--artifacts-at",
            help="Where --out's files will be once the run is over, when the caller moves them (`pants test` copies "
            "them to dist/test/<target>/): the freeze command a flake's line prints names them there.",
        ),
    ] = None,
    root: Root = Path("."),
) -> None:
    """Pin, check, classify and honour freezes in one run: the verdict a CI job acts on.

    Exit 0 pass (no failure, or only flakes under valid freezes), 1 blocked
    (regression, mixed edit, unfrozen flake), 3 oracle review, 4 incomplete, 2 bad input."""

    def action() -> int:
        from witness_gate import gate as gates
        from witness_gate import store
        from witness_gate.config import load_config
        from witness_gate.properties import property_files

        store.check_output_dir(out, "--out")
        _check_output_files(junit_xml=junit_xml)
        _check_format(output_format)
        config = load_config(
            root,
            max_freeze_hours=max_freeze_hours,
            replay_timeout_seconds=replay_timeout_seconds,
            import_paths=tuple(import_path or ()),
        )
        if (impl_paths is None) != (oracle_paths is None):
            raise WitnessGateError("--impl-paths and --oracle-paths go together")
        ownership_lists = (impl_paths, oracle_paths) if impl_paths is not None and oracle_paths is not None else None
        files = property_files(properties)
        _say_how_confined()
        request = gates.GateRequest(
            root,
            _fixture(fixture, no_fixture),
            generator_version,
            replays,
            max_examples,
            files,
            out,
            check_only,
            diff_paths,
            freezes,
            config,
            ownership_lists,
            _progress(),
            replay_interpreters,
            _conditions(condition),
            artifacts_at,
            corpus if corpus is not None else root / config.corpus_dir,
            search_salt,
        )
        result = gates.run(request, datetime.now(timezone.utc))
        _emit(result.record, out / gates.WITNESS_DIR, result.lines, output_format, junit_xml, suite)
        return cast(int, result.record["exit_code"])

    _run(action)


@app.command()
def review(
    base: Annotated[
        str,
        typer.Option(
            "--base",
            help="The reviewed base: a commit id, a full ref (refs/remotes/origin/main), or a branch or tag name only "
            "one of refs/heads, refs/remotes and refs/tags holds; never HEAD. Its configuration, suites, oracle "
            "and freezes decide.",
        ),
    ],
    head: Annotated[
        str,
        typer.Option(
            "--head",
            help="The patch's head (any revision): reviewed as merged into the base; only its implementation paths "
            "are used.",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output directory: review.json and one gate directory per suite.")
    ] = Path(".artifacts/review"),
    repo: Annotated[
        Path, typer.Option("--repo", help="The git repository (read as objects; its working tree plays no part).")
    ] = Path("."),
    output_format: Annotated[
        str,
        typer.Option(
            "--format", help="Standard output: text, or github (workflow annotations, then the verdict line)."
        ),
    ] = "text",
    junit_xml: JunitOption = None,
    sarif: Annotated[
        Optional[Path],
        typer.Option(
            "--sarif", help="Also write the blocking witnesses as SARIF 2.1.0 to this file (for code scanning)."
        ),
    ] = None,
    summary: Annotated[
        Optional[Path],
        typer.Option(
            "--summary",
            help="Also write a Markdown summary to this file (a pull-request comment, or $GITHUB_STEP_SUMMARY).",
        ),
    ] = None,
    suites: Annotated[
        Optional[Path],
        typer.Option(
            "--suites",
            help="The base's build graph: the file `pants witness-gate-suites --output-file=<file> ::` wrote in a "
            "clean checkout of the base. Required when the base declares witness_properties targets; refused "
            "when it was read from another commit or the base's pyproject.toml declares suites too.",
        ),
    ] = None,
) -> None:
    """The pull-request gate: the base's policy, oracle and freezes applied to the head's implementation.

    Exit 0 pass, 1 blocked (regression, mixed edit, unfrozen flake), 3 oracle review
    (the patch edits the oracle, the gate's controls or a freeze), 4 incomplete, 2 bad input
    or a job set to write the shared remote cache (PANTS_REMOTE_CACHE_WRITE, or the base's
    pants.toml or .pants.rc): pull-request jobs only read it."""

    def action() -> int:
        import os

        from witness_gate import formats, store, witness
        from witness_gate import review as reviews

        if output_format not in ("text", "github"):
            raise WitnessGateError(
                f"--format {output_format!r}: review writes text or github (JUnit, SARIF and Markdown go to files)"
            )
        store.check_output_dir(out, "--out")
        _check_output_files(junit_xml=junit_xml, sarif=sarif, summary=summary)
        _say_how_confined()
        result = reviews.review(repo, base, head, out, datetime.now(timezone.utc), os.environ, suites)
        findings = [
            formats.SuiteFindings(
                name,
                record,
                formats.findings(
                    record,
                    witness.index(
                        out / name / "witnesses", [r["file"].rsplit("/", 1)[-1] for r in record["witnesses"]]
                    ),
                    result.reached.get(name, ()),
                ),
            )
            for name, record in result.suites.items()
        ]
        if junit_xml is not None:
            store.write_atomic(junit_xml, formats.review_junit_xml(result.record, findings, result.reasons))
        if sarif is not None:
            store.write_atomic(sarif, formats.json_bytes(formats.review_sarif(result.record, findings, result.reasons)))
        if summary is not None:
            store.write_atomic(
                summary, formats.review_summary(result.record, findings, result.reasons, result.freeze_steps).encode()
            )
        if output_format == "github":
            for line in formats.review_annotations(findings, result.reasons):
                typer.echo(line)
            typer.echo(result.lines[-1])
        else:
            for line in result.lines:
                typer.echo(_coloured(line))
        return result.exit_code

    _run(action)


@app.command()
def note(
    out: Annotated[
        Path, typer.Option("--out", help="The gate's output directory (its --out): gate.json and witnesses/.")
    ] = Path(".artifacts/gate"),
    check: Annotated[
        Optional[Path],
        typer.Option(
            "--check",
            help="A drafted note (Markdown): exit 1 naming each fact it quotes that the artifacts do not hold.",
        ),
    ] = None,
) -> None:
    """Print the review note that quotes the witness JSON, or check a drafted one against the
    artifacts (the spec: discard a note that disagrees with the witness file)."""

    def action() -> int:
        from witness_gate import note as notes
        from witness_gate import store, witness

        gate = store.load_artifact(out / "gate.json", "gate")
        witnesses = witness.index(out / "witnesses", [row["file"].rsplit("/", 1)[-1] for row in gate["witnesses"]])
        if check is None:
            typer.echo(notes.render(gate, witnesses), nl=False)
            return 0
        text = store.read_regular_file(check, "note").decode("utf-8", "replace")
        problems = notes.disagreements(text, gate, witnesses)
        for problem in problems:
            typer.echo(f"disagrees: {problem}")
        typer.echo(
            f"note: {len(problems)} disagreement(s) with {out}: discard it" if problems else f"note: agrees with {out}"
        )
        return 1 if problems else 0

    _run(action)


@app.command()
def retain(
    witness: Annotated[
        Path, typer.Option("--witness", help="A witness file of a red run (its gate's witnesses/ folder).")
    ],
    corpus: Annotated[
        Optional[Path],
        typer.Option(
            "--corpus", help="The corpus directory (default: corpus-dir of pyproject.toml, else .witness-gate/corpus)."
        ),
    ] = None,
    root: Root = Path("."),
) -> None:
    """Keep a witness in the corpus, bytes unchanged, so every later gate and review replays it.

    The corpus is oracle: commit the new entry in a pull request of its own (`review` answers
    it with exit 3, for the owners to approve)."""

    def action() -> int:
        from witness_gate import corpus as corpora

        target, new = corpora.retain(witness, corpus if corpus is not None else root / _config(root).corpus_dir)
        typer.echo(f"retain: {witness.name} -> {target}" if new else f"retain: {target} already holds this witness")
        return 0

    _run(action)


@app.command()
def codeowners(
    owner: Annotated[
        Optional[list[str]],
        typer.Option("--owner", help="Owner of the oracle paths, e.g. @org/spec-owners (repeatable)."),
    ] = None,
    check: Annotated[
        Optional[Path],
        typer.Option(
            "--check", help="An existing CODEOWNERS file: exit 1 when it leaves an oracle path without an owner."
        ),
    ] = None,
    root: Root = Path("."),
    suites: Annotated[
        Optional[Path],
        typer.Option(
            "--suites",
            help="The build graph's suites (`pants witness-gate-suites --output-file=<file> ::` of this checkout's "
            "commit) when BUILD files declare them.",
        ),
    ] = None,
) -> None:
    """Print CODEOWNERS lines for every oracle path `review` judges (build files that declare
    gated targets included), or check a CODEOWNERS file."""

    def action() -> int:
        from witness_gate import git, store, suites_document
        from witness_gate import codeowners as owners

        config = _config(root)
        if suites is not None:
            commit = git.commit(root, "HEAD", "checkout")
            config = suites_document.graph_config(
                store.read_regular_file(suites, "--suites document"),
                str(suites),
                commit,
                config,
                "this checkout's HEAD",
            )
        build_files = owners.gated_build_files(root)
        if check is not None:
            missing = owners.uncovered(
                config, store.read_regular_file(check, "CODEOWNERS").decode("utf-8", "replace"), build_files
            )
            for pattern in missing:
                typer.echo(f"uncovered: {pattern} has no owner in {check}")
            total = len(owners.required(config, build_files))
            typer.echo(f"codeowners: {total - len(missing)} of {total} oracle paths owned")
            return 1 if missing else 0
        if not owner:
            raise WitnessGateError("--owner is required to print CODEOWNERS lines (or give --check FILE)")
        for line in owners.lines(config, owner, build_files):
            typer.echo(line)
        return 0

    _run(action)


@app.command()
def approvals(
    review: Annotated[Path, typer.Option("--review", help="The review's --out directory (review.json).")],
    reviews: Annotated[
        Path,
        typer.Option(
            "--reviews",
            help="The pull request's reviews as GitHub's API lists them (gh api repos/OWNER/REPO/pulls/N/reviews "
            "--paginate --slurp): user.login, state, commit_id.",
        ),
    ],
    author: Annotated[
        str, typer.Option("--author", help="The pull request's author (their own approval never counts).")
    ],
    team_members: Annotated[
        Optional[Path],
        typer.Option("--team-members", help="JSON object: each owning team (@org/team) with its members' logins."),
    ] = None,
    codeowners_path: Annotated[
        Optional[str],
        typer.Option(
            "--codeowners",
            help="Where the base keeps CODEOWNERS (default: GitHub's order, .github/CODEOWNERS, CODEOWNERS, "
            "docs/CODEOWNERS); read from the base commit, never the head.",
        ),
    ] = None,
    repo: Annotated[Path, typer.Option("--repo", help="The git repository holding the review's base commit.")] = Path(
        "."
    ),
) -> None:
    """Whether a reviewed pull request may merge: exit 0 when the review passed, or when it is
    an oracle review (exit 3) and the owners of every edited oracle path, by the base's
    CODEOWNERS, approved its head; 1 otherwise, naming each path that waits."""

    def action() -> int:
        from witness_gate import approvals as approval
        from witness_gate import git, store

        record = store.load_artifact(review / "review.json", "review")
        base = git.commit(repo, record["base"], "base")
        places = (
            [codeowners_path]
            if codeowners_path is not None
            else [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"]
        )
        text = next((data for place in places if (data := git.read_file(repo, base, place)) is not None), b"").decode(
            "utf-8", "replace"
        )
        listed = approval.parse_reviews(store.read_regular_file(reviews, "--reviews"), str(reviews))
        members = (
            approval.parse_members(store.read_regular_file(team_members, "--team-members"), str(team_members))
            if team_members
            else {}
        )
        decision = approval.decide(
            record["verdict"], list(record["oracle_paths"]), text, listed, members, record["head"], author
        )
        for line in decision.lines:
            typer.echo(line)
        return 0 if decision.mergeable else 1

    _run(action)


@app.command()
def schema(name: Annotated[str, typer.Argument(help="lock, witness, freeze, report, gate or review.")]) -> None:
    """Print one of the JSON Schemas the artifacts follow."""

    def action() -> int:
        from witness_gate.schemas import schema_text

        sys.stdout.write(schema_text(name))
        return 0

    _run(action)


def main() -> None:
    app()
