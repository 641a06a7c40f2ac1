"""Which settings make a Pants run write the shared remote cache (pure).

A pull-request job runs the patch's code; if it could write the remote cache, it could
store any action result under any action digest, and a protected-branch job would later
take that result as a pass. The control is the cache server: pull-request jobs get a
read-only endpoint (docs/scale-out.md). `review` refuses to run when its job is
configured to write anyway, as a tripwire for that misconfiguration: the environment
(`PANTS_REMOTE_CACHE_WRITE`, `PANTS_GLOBAL_REMOTE_CACHE_WRITE`) or the base revision's
Pants configuration files (`pants.toml`, `.pants.rc`: a setting there makes every job
write, pull requests included).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping

# The environment variables Pants reads for the global option `remote_cache_write`.
ENV_VARIABLES = ("PANTS_REMOTE_CACHE_WRITE", "PANTS_GLOBAL_REMOTE_CACHE_WRITE")
# The configuration files Pants reads from the build root by default.
CONFIG_FILES = ("pants.toml", ".pants.rc")
# The sections whose `remote_cache_write` applies to the global scope: `[DEFAULT]` values
# are every section's defaults.
_SECTIONS = ("GLOBAL", "DEFAULT")
_FALSE = ("", "false", "0", "no", "off")
FIX = "pass --remote-cache-write only on protected-branch jobs"


def _writes(value: object) -> bool:
    # Anything but a plain false counts: Pants may read a string, an interpolation or a
    # value it rejects later, and the tripwire fails closed.
    return value is not False and not (isinstance(value, str) and value.strip().lower() in _FALSE)


def cache_write_settings(environ: Mapping[str, str], configs: Mapping[str, bytes | None]) -> list[str]:
    """Each setting that turns remote cache writes on, as `where: what` (empty: none).

    `configs` maps a label (e.g. `main:pants.toml`) to the file's bytes, None when absent.
    A configuration file that is not TOML counts as writing: what it sets cannot be told.
    """
    found = [
        f"{name}={environ[name]!r} in the environment"
        for name in ENV_VARIABLES
        if name in environ and _writes(environ[name])
    ]
    for label, data in configs.items():
        if data is None:
            continue
        try:
            parsed = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            found.append(f"{label} is not TOML ({error}), so it may set remote_cache_write")
            continue
        for section in _SECTIONS:
            table = parsed.get(section)
            if isinstance(table, dict) and "remote_cache_write" in table and _writes(table["remote_cache_write"]):
                found.append(f"{label} sets [{section}].remote_cache_write = {table['remote_cache_write']!r}")
    return found
