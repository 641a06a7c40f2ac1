"""The files pytest reads when it collects a test module (pure; shared by the worker, which
fixes pytest's configuration, and the review, which owns every one of them as oracle)."""

from __future__ import annotations

# The files pytest may take its configuration from, in the order it tries them in each
# directory (pytest 9 reads the TOML ones first), with the section that makes each one count
# (None: any such file counts; pyproject's `[tool.pytest]` or `[tool.pytest.ini_options]`).
INI_FILES = (
    ("pytest.toml", None),
    (".pytest.toml", None),
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", b"[tool.pytest"),
    ("tox.ini", b"[pytest]"),
    ("setup.cfg", b"[tool:pytest]"),
)
# What pytest reads in each directory from the root down to a test module, besides ini files.
COLLECTION_FILES = ("conftest.py", "__init__.py")


def read_at_collection(path: str) -> list[str]:
    """Every file pytest may read at collection for a test module (`*.py`) or a directory of
    them at repository path `path`: the ini candidates, conftest files and package
    `__init__.py` files of each directory from the repository root down to it (files inside
    a directory of modules are its own)."""
    parts = path.rstrip("/").split("/")
    if path.endswith(".py"):
        parts = parts[:-1]
    directories = ["/".join(parts[:depth]) for depth in range(len(parts) + 1)]
    names = [name for name, _ in INI_FILES] + list(COLLECTION_FILES)
    return [f"{directory}/{name}" if directory else name for directory in directories for name in names]
