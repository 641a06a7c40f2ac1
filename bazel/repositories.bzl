"""The repositories witness_gate_test needs, declared by `witness_gate_repositories()`.

@witness_gate_python: the interpreter that runs the runner PEX, resolved once per machine
(like Bazel's own local Python toolchain detection): never "whatever python3 is on PATH" at
test time. @remote_coverage_tools: an offline stub of the repository every test rule names.
"""

def _witness_gate_python_impl(rctx):
    wanted = rctx.os.environ.get("WITNESS_GATE_PYTHON") or rctx.attr.interpreter
    found = rctx.which(wanted) if "/" not in wanted else rctx.path(wanted)
    if not found or not found.exists:
        fail("witness_gate_python: no interpreter %r (CPython %s, the runner PEX's): install it or set WITNESS_GATE_PYTHON=/path/to/python%s" % (wanted, rctx.attr.version, rctx.attr.version))

    # A pyenv shim or a venv's link names an interpreter; record the real executable, so the
    # test does not depend on PATH, PYENV_* or the shim's own lookup at run time.
    probe = rctx.execute([found, "-I", "-c", "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2]); print(sys.implementation.name)"])
    lines = probe.stdout.strip().split("\n")
    if probe.return_code != 0 or len(lines) != 3:
        fail("witness_gate_python: %s did not run: %s" % (found, probe.stderr.strip()))
    executable, version, implementation = lines
    if implementation != "cpython" or version != rctx.attr.version:
        fail("witness_gate_python: %s is %s %s; the runner PEX needs CPython %s (set WITNESS_GATE_PYTHON)" % (found, implementation, version, rctx.attr.version))
    rctx.file("BUILD.bazel", "")
    rctx.file("python.bzl", "PYTHON = %r\nPYTHON_VERSION = %r\n" % (executable, version))

witness_gate_python = repository_rule(
    implementation = _witness_gate_python_impl,
    attrs = {
        "interpreter": attr.string(default = "python3.11", doc = "A name on PATH or an absolute path."),
        "version": attr.string(default = "3.11", doc = "The runner PEX's interpreter version (major.minor)."),
    },
    # Re-resolved when either changes (e.g. a new pyenv on PATH).
    environ = ["WITNESS_GATE_PYTHON", "PATH"],
)

_COVERAGE_STUB_BUILD = """\
# The two targets every test rule's implicit coverage attributes name. `bazel coverage`
# runs them and fails with the script's message; `bazel test` never runs them.
filegroup(name = "coverage_report_generator", srcs = ["unavailable.sh"], visibility = ["//visibility:public"])

filegroup(name = "lcov_merger", srcs = ["unavailable.sh"], visibility = ["//visibility:public"])
"""

_COVERAGE_STUB_SCRIPT = """\
#!/bin/sh
echo "@remote_coverage_tools is an offline stub (witness_gate_coverage_stub in @witness_gate//bazel:repositories.bzl): coverage is not available" >&2
exit 1
"""

def _coverage_stub_impl(rctx):
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD.bazel", _COVERAGE_STUB_BUILD)
    rctx.file("unavailable.sh", _COVERAGE_STUB_SCRIPT, executable = True)

# Stands in for @remote_coverage_tools, which Bazel 4.2 would download for every test rule:
# these machines reach no host it comes from, and witness_gate_test collects no coverage.
# A repository rule, not a folder named by local_repository: it works the same from this
# checkout and from the release archive, where no path inside the archive can be named.
witness_gate_coverage_stub = repository_rule(implementation = _coverage_stub_impl)

def witness_gate_repositories():
    """The repositories witness_gate_test needs, for a WORKSPACE to call once: the interpreter
    (@witness_gate_python) and the offline @remote_coverage_tools stub."""
    witness_gate_python(name = "witness_gate_python")
    witness_gate_coverage_stub(name = "remote_coverage_tools")
