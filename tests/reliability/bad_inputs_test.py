"""The bad-input figure of bench/reliability.py at CI scale: every input of the catalogue
through one of the commands that read it, rotating, refused in one line or kept red."""

from __future__ import annotations

from pathlib import Path

import reliability
from support.figures import assert_clean


def test_every_bad_input_is_refused_in_one_line_or_kept_red(tmp_path: Path):
    figure = reliability.bad_inputs(tmp_path, every_command=False)
    assert_clean(figure)
    assert len(reliability.catalogue()) >= 40
