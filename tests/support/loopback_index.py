"""A package index on loopback, for the pull-request job's install step: a PEP 503 simple
index directory (`simple/<project>/index.html` linking the files) served by
`python3 -m http.server` bound to 127.0.0.1, started and stopped by the test; and wheels
planted in it under the runner's name."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shutil
import subprocess
import sys
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def project(wheel: Path) -> str:
    """The PEP 503 name of a wheel's project (`witness_gate-0.4.0-...whl` is `witness-gate`)."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def simple_index(root: Path, wheels: list[Path]) -> Path:
    """Writes `root/files/` (the wheels) and `root/simple/` (a page per project, its links
    without `#sha256=` fragments, as an index that lies would serve them); returns root."""
    (root / "files").mkdir(parents=True)
    projects: dict[str, list[str]] = {}
    for wheel in wheels:
        shutil.copy2(wheel, root / "files" / wheel.name)
        projects.setdefault(project(wheel), []).append(wheel.name)
    for name, files in projects.items():
        page = root / "simple" / name / "index.html"
        page.parent.mkdir(parents=True)
        links = "".join(f'<a href="../../files/{html.escape(f)}">{html.escape(f)}</a><br>\n' for f in sorted(files))
        page.write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")
    names = "".join(f'<a href="{n}/">{n}</a><br>\n' for n in sorted(projects))
    (root / "simple" / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{names}</body></html>\n")
    return root


@contextmanager
def served(root: Path, log: Path) -> Iterator[str]:
    """Serves `root` on 127.0.0.1 (a free port) while the block runs; yields the simple
    index's URL. The server's request log goes to `log`."""
    with open(log, "w") as requests:
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(root)],
            stdout=subprocess.PIPE,
            stderr=requests,
            text=True,
        )
        assert server.stdout is not None  # stdout=PIPE
        try:
            banner = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
            port = re.search(r"port (\d+)", banner)
            assert port, f"http.server did not start: {banner!r}"
            yield f"http://127.0.0.1:{port.group(1)}/simple"
        finally:
            server.terminate()
            server.wait(timeout=30)
            server.stdout.close()


PLANTED = "planted runner ran"


def planted_wheel(directory: Path, version: str, build: str = "") -> Path:
    """A wheel named witness-gate `version` (with a build tag, `build`) whose `witness-gate`
    prints PLANTED and exits 0: what a planted release would do to a gate."""
    tag = f"-{build}" if build else ""
    wheel = directory / f"witness_gate-{version}{tag}-py3-none-any.whl"
    info = f"witness_gate-{version}.dist-info"
    files = {
        "witness_gate/__init__.py": b"",
        "witness_gate/cli.py": f"def main():\n    print({PLANTED!r})\n    return 0\n".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: witness-gate\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: planted\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        + (f"Build: {build}\n".encode() if build else b""),
        f"{info}/entry_points.txt": b"[console_scripts]\nwitness-gate = witness_gate.cli:main\n",
    }
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def pinned_dependency_wheels(job: Path, directory: Path) -> list[Path]:
    """The wheels of the runner's dependencies, as the pull-request job at `job` pins them,
    for this machine (CPython 3.11 on Linux), downloaded by hash from PyPI into `directory`:
    what a team's index serves beside the runner wheel."""
    # The pins block, as the workflow's cache step reads it (`sed` between <<'PINS' and PINS).
    [pins] = re.findall(r"<<'PINS'\n(.*?)^PINS$", job.read_text(), re.S | re.M)
    [runner, *others] = re.split(r"(?m)^(?=\S)", pins)[1:]  # one requirement each, with its hash lines
    assert runner.startswith("witness-gate=="), runner
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "requirements.txt").write_text("".join(others))
    subprocess.run(
        [
            "python3.11",
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--require-hashes",
            "--only-binary",
            ":all:",
            "--no-deps",
            "-r",
            str(directory / "requirements.txt"),
            "-d",
            str(directory / "dist"),
        ],
        check=True,
        timeout=600,
    )
    return sorted((directory / "dist").glob("*.whl"))
