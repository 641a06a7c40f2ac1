"""The interpreter that runs the runner PEX, resolved once per machine (like Bazel's own
local Python toolchain detection): never "whatever python3 is on PATH" at test time."""

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
