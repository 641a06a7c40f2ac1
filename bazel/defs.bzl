"""witness-gate under `bazel test`: `witness_fixture` and `witness_gate_test`.

They mirror the Pants targets `witness_fixture` and `witness_properties` (same field names,
same ownership rules): the property sources, the fixture, the oracle helpers and the
declaring BUILD.bazel are oracle paths; the files of `dependencies` are implementation
paths. The test runs the runner PEX's `gate` command on exactly the declared inputs,
copied out of the runfiles into a fresh tree; the verdict is the runner's.

A repository loads them from the release archive as `@witness_gate//bazel:defs.bzl`; this
repository as `//bazel:defs.bzl`. Labels of the rules' own files and flags are `Label()`s,
which resolve in the repository of this file, never in the caller's.
"""

load("@witness_gate_python//:python.bzl", "PYTHON", "PYTHON_VERSION")

WitnessFixtureInfo = provider(
    doc = "A fixture pinned by its bytes, with the version of the generators around it.",
    fields = {"file": "the fixture File", "generator_version": "int"},
)

def _fixture_impl(ctx):
    return [
        DefaultInfo(files = depset([ctx.file.source])),
        WitnessFixtureInfo(file = ctx.file.source, generator_version = ctx.attr.generator_version),
    ]

witness_fixture = rule(
    implementation = _fixture_impl,
    doc = "A fixture for witness_gate_test: one file pinned by its bytes, and the reviewed generator version.",
    attrs = {
        "source": attr.label(allow_single_file = True, mandatory = True),
        "generator_version": attr.int(mandatory = True),
    },
)

def _string_setting_impl(ctx):
    return [_StringSettingInfo(value = ctx.build_setting_value)]

_StringSettingInfo = provider(fields = ["value"])

string_setting = rule(implementation = _string_setting_impl, build_setting = config.string(flag = True))

def _repository_command_impl(ctx):
    # `bazel run` starts the command in its runfiles tree; the script itself changes to
    # $BUILD_WORKING_DIRECTORY, where `bazel run` was called.
    command = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = command, target_file = ctx.file.script, is_executable = True)
    return [DefaultInfo(executable = command, runfiles = ctx.runfiles(files = [ctx.file.script]))]

# A script of this folder as a `bazel run` target. Not sh_binary: Bazel 4.2's needs
# @rules_cc, which an offline machine cannot fetch.
repository_command = rule(
    implementation = _repository_command_impl,
    executable = True,
    attrs = {"script": attr.label(allow_single_file = True, mandatory = True)},
)

_CHANGED_FILES_FLAG = Label("//bazel:changed_files")
_CHANGED_FILES_COMMAND = Label("//bazel:changed-files")
_RUNNER_FLAG = Label("//bazel:runner")
_RUNNER_SHA256_FLAG = Label("//bazel:runner_sha256")

def _files_of(target):
    # Python targets bring their transitive sources; anything else (a filegroup) its files.
    if PyInfo in target:
        return target[PyInfo].transitive_sources.to_list()
    return target[DefaultInfo].files.to_list()

def _imports_of(target, workspace):
    # PyInfo.imports are runfiles paths ("<workspace>/examples/orders/src"): strip the
    # workspace, since the gate runs from a tree laid out like the repository.
    if PyInfo not in target:
        return []
    return [path[len(workspace) + 1:] for path in target[PyInfo].imports.to_list() if path.startswith(workspace + "/")]

def _repo_path(file, label):
    # Only this repository's source files: the tree the gate runs in is the repository's.
    if not file.is_source or file.owner.workspace_root:
        fail("%s: %s is not a source file of this repository; witness_gate_test gates sources only" % (label, file.short_path))
    return file.short_path

def _package_path(ctx, path):
    return ctx.label.package + "/" + path if ctx.label.package else path

def _lines(paths):
    return "".join([path + "\n" for path in paths])

def _gate_test_impl(ctx):
    label = str(ctx.label)
    if ctx.files.freezes and "external" not in ctx.attr.tags:
        # A pass that rests on a freeze must be re-decided once it expires; the macro tags such
        # tests "external" (never cached). Calling the rule without it would cache that pass.
        fail("%s: freezes are present but the test is not tagged external: declare it with witness_gate_test" % label)
    fixture = ctx.attr.fixture[WitnessFixtureInfo]
    properties = [_repo_path(f, label) for f in ctx.files.sources]
    helpers = {_repo_path(f, label): None for dep in ctx.attr.oracle_dependencies for f in _files_of(dep)}
    impl = {_repo_path(f, label): None for dep in ctx.attr.dependencies for f in _files_of(dep)}
    impl.update({_repo_path(f, label): None for f in ctx.files.impl_paths})
    # A helper reached through `dependencies` as well is still the oracle's (as under Pants).
    impl = [path for path in impl if path not in helpers]
    # The BUILD.bazel declares the sources, the fixture, the replay count and the extra paths:
    # editing it edits the oracle.
    oracle = {path: None for path in properties + helpers.keys() + [_repo_path(fixture.file, label), ctx.build_file_path]}
    oracle.update({_repo_path(f, label): None for f in ctx.files.oracle_paths})
    # The packages the properties, the fixture and the oracle helpers come from: their build
    # files decide what those labels hold (a filegroup swapped there swaps the oracle). Both
    # names count, existing or not, like generated oracle paths.
    for dep in ctx.attr.sources + ctx.attr.oracle_dependencies + [ctx.attr.fixture]:
        package = dep.label.package
        if dep.label.workspace_root == "" and package != ctx.label.package:
            oracle.update({(package + "/" if package else "") + name: None for name in ("BUILD", "BUILD.bazel")})
    oracle.update({_package_path(ctx, p): None for p in ctx.attr.generated_oracle_paths})
    for path in impl:
        if path in oracle:
            fail("%s: %s is both oracle (a property module, the fixture or an oracle path) and implementation (a file of a dependency, or impl_paths): give each path one owner" % (label, path))

    inputs = ctx.files.sources + ctx.files.oracle_dependencies + ctx.files.oracle_paths + ctx.files.impl_paths + [fixture.file]
    inputs += [f for dep in ctx.attr.dependencies + ctx.attr.oracle_dependencies for f in _files_of(dep)]
    lists = {}
    for name, paths in [("impl", impl), ("oracle", sorted(oracle.keys()))]:
        lists[name] = ctx.actions.declare_file("%s.witness-gate/%s.txt" % (ctx.label.name, name))
        ctx.actions.write(lists[name], _lines(paths))
    imports = {p: None for dep in ctx.attr.dependencies + ctx.attr.oracle_dependencies for p in _imports_of(dep, ctx.workspace_name)}
    imports.update({_package_path(ctx, p): None for p in ctx.attr.imports})
    changed = ctx.files.changed_files
    if not ctx.files.runner:
        fail("%s: %s names no runner PEX: add `build --%s=//:dist/runner/witness-gate.pex` (the label of your runner PEX) to .bazelrc" % (label, _RUNNER_FLAG, _RUNNER_FLAG))
    if len(ctx.files.runner) > 1:
        fail("%s: %s names %d files, not one runner PEX" % (label, _RUNNER_FLAG, len(ctx.files.runner)))
    runner = ctx.files.runner[0]
    argv = [
        "gate",
        "--fixture", _repo_path(fixture.file, label),
        "--generator-version", str(fixture.generator_version),
        "--replays", str(ctx.attr.replays),
        "--max-examples", str(ctx.attr.max_examples),
        "--freezes", _package_path(ctx, ctx.attr.freezes_dir),
        "--corpus", _package_path(ctx, ctx.attr.corpus_dir),
        "--suite", label,
    ]
    for path in properties:
        argv += ["--properties", path]
    for path in imports:
        argv += ["--import-path", path]
    script = ctx.actions.declare_file(ctx.label.name + ".witness-gate.sh")
    ctx.actions.expand_template(
        template = ctx.file._template,
        output = script,
        is_executable = True,
        substitutions = {
            "@@PYTHON@@": shell_quote(PYTHON),
            "@@PYTHON_VERSION@@": PYTHON_VERSION,
            "@@RUNNER@@": shell_quote(runner.short_path),
            "@@RUNNER_SHA256@@": shell_quote(ctx.attr._runner_sha256[_StringSettingInfo].value),
            "@@RUNNER_FLAG@@": str(_RUNNER_FLAG),
            "@@RUNNER_SHA256_FLAG@@": str(_RUNNER_SHA256_FLAG),
            "@@CHANGED_FILES_FLAG@@": str(_CHANGED_FILES_FLAG),
            "@@CHANGED_FILES_COMMAND@@": str(_CHANGED_FILES_COMMAND),
            "@@CHANGED@@": shell_quote(changed[0].short_path if len(changed) == 1 else ""),
            "@@CHANGED_COUNT@@": str(len(changed)),
            "@@IMPL@@": shell_quote(lists["impl"].short_path),
            "@@ORACLE@@": shell_quote(lists["oracle"].short_path),
            "@@COPY@@": " ".join([shell_quote(p) for p in sorted({f.short_path: None for f in inputs + ctx.files.freezes + ctx.files.corpus}.keys())]),
            "@@ARGV@@": " ".join([shell_quote(a) for a in argv]),
        },
    )
    runfiles = ctx.runfiles(files = inputs + ctx.files.freezes + ctx.files.corpus + changed + [runner, lists["impl"], lists["oracle"]])
    # The suite as `review` reads it (bazel/suites.py gathers these into one document): the same
    # ownership and import paths the test runs with, declared once, here.
    suite = ctx.actions.declare_file("%s.witness-gate/suite.json" % ctx.label.name)
    ctx.actions.write(suite, json.encode({
        "name": (ctx.label.package.replace("/", ".") + "." if ctx.label.package else "") + ctx.label.name,
        "address": "//%s:%s" % (ctx.label.package, ctx.label.name),
        "fixture": _repo_path(fixture.file, label),
        "generator_version": fixture.generator_version,
        "properties": sorted(properties),
        "replays": ctx.attr.replays,
        "max_examples": ctx.attr.max_examples,
        "import_paths": sorted(imports.keys()),
        "impl": sorted(impl),
        "oracle": sorted(oracle.keys()),
        # Bazel's globs are gone once the package loads: any module beside the properties,
        # which a glob of them would take in, is oracle when the head adds it.
        "oracle_globs": sorted({(path.rsplit("/", 1)[0] + "/*.py") if "/" in path else "*.py": None for path in properties}.keys()),
        "freezes_dir": _package_path(ctx, ctx.attr.freezes_dir),
        "corpus_dir": _package_path(ctx, ctx.attr.corpus_dir),
    }) + "\n")
    return [DefaultInfo(executable = script, runfiles = runfiles), OutputGroupInfo(witness_gate_suite = depset([suite]))]

def shell_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"

_witness_gate_test = rule(
    implementation = _gate_test_impl,
    test = True,
    attrs = {
        "sources": attr.label_list(allow_files = [".py"], mandatory = True, allow_empty = False),
        "fixture": attr.label(mandatory = True, providers = [WitnessFixtureInfo]),
        "dependencies": attr.label_list(allow_files = True),
        "oracle_dependencies": attr.label_list(allow_files = True),
        "replays": attr.int(default = 5),
        "max_examples": attr.int(default = 100),
        "impl_paths": attr.label_list(allow_files = True),
        "oracle_paths": attr.label_list(allow_files = True),
        "generated_oracle_paths": attr.string_list(),
        "imports": attr.string_list(),
        "freezes": attr.label_list(allow_files = [".json"]),
        "freezes_dir": attr.string(mandatory = True),
        "corpus": attr.label_list(allow_files = [".json"]),
        "corpus_dir": attr.string(mandatory = True),
        "changed_files": attr.label(default = _CHANGED_FILES_FLAG, allow_files = True),
        # Any number of files, so that the unset flag (an empty filegroup) gets the
        # instruction above rather than Bazel's "must produce a single file".
        "runner": attr.label(default = _RUNNER_FLAG, allow_files = True),
        "_runner_sha256": attr.label(default = _RUNNER_SHA256_FLAG),
        "_template": attr.label(default = Label("//bazel:gate_test.sh.tpl"), allow_single_file = True),
    },
)

def witness_gate_test(name, sources, fixture, dependencies = [], oracle_dependencies = [], replays = 5, max_examples = 100,
                      impl_paths = [], oracle_paths = [], generated_oracle_paths = [], imports = [],
                      freezes_dir = ".witness-gate/freezes", corpus_dir = ".witness-gate/corpus", tags = [], **kwargs):
    """The gate on `sources` (the property modules) against `fixture`, under `bazel test`.

    Freezes are the `*.json` files in `freezes_dir`, relative to this package (so the
    repository's `.witness-gate/freezes/` for a test declared in the root package). While
    any exists the test is tagged `external`, which Bazel never serves from its cache: a
    pass that rests on a freeze is re-decided on every run, so an expired freeze turns the
    next `bazel test` red with nothing else changed. Only the macro can see them: a glob is
    evaluated when this package loads, and tags must be known then. The retained witnesses
    the gate replays with its own are the `*.json` files in `corpus_dir`, relative to this
    package likewise.
    """
    if replays < 1 or replays > 1000:
        fail("%s: replays must be between 1 and 1000, got %d" % (name, replays))
    if max_examples < 1 or max_examples > 100000:
        fail("%s: max_examples must be between 1 and 100000, got %d" % (name, max_examples))
    freezes = native.glob([freezes_dir.rstrip("/") + "/*.json"])
    _witness_gate_test(
        name = name,
        sources = sources,
        fixture = fixture,
        dependencies = dependencies,
        oracle_dependencies = oracle_dependencies,
        replays = replays,
        max_examples = max_examples,
        impl_paths = impl_paths,
        oracle_paths = oracle_paths,
        generated_oracle_paths = generated_oracle_paths,
        imports = imports,
        freezes = freezes,
        freezes_dir = freezes_dir.rstrip("/"),
        corpus = native.glob([corpus_dir.rstrip("/") + "/*.json"]),
        corpus_dir = corpus_dir.rstrip("/"),
        tags = tags + (["external"] if freezes and "external" not in tags else []),
        **kwargs
    )
