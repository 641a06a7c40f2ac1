"""`python -m witness_gate`: the CLI, without the current directory on the import path.

`-m` puts the current directory first on `sys.path`; run from inside a checkout under
review, a committed `tomllib.py` (or any module the runner imports later) would run in
the process that decides. The package itself is already imported by then.
"""

import os
import sys

_HERE = os.path.realpath(os.getcwd())
sys.path[:] = [entry for entry in sys.path if entry and os.path.realpath(entry) != _HERE]

from witness_gate.cli import main  # noqa: E402

main()
