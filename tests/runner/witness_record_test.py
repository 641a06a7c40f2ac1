"""A witness file read into the typed record (`witness.Witness`) and written back is the
same file, byte for byte: the record changes nothing on disk, so neither a witness's hash,
nor its file name, nor the schema it meets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conditions_test import WITNESS_TEMPLATE

from witness_gate import canonical, store, witness

# witness_records.json: one witness of each kind `check` writes, as this suite's runs
# wrote them (histories cut to two entries: a history is passed on as it is): a property's
# search shrunk from another first failing payload, one under a declared condition, a
# `rejects=` payload the property accepted, a @given test (its payload the choices
# Hypothesis saved), a @given test whose failing call ended the worker (the witness is the
# search up to that case), and a state machine (the steps Hypothesis printed). With them,
# the schema version 2 witness the conditions tests hold.
FOUND = json.loads((Path(__file__).parent / "witness_records.json").read_text("utf-8"))
RECORDS = {
    **FOUND,
    # Declared, and the workers' fixed environment: present, and empty.
    "property under the declared default environment": {
        **FOUND["property under a declared condition"],
        "condition": {},
    },
    "schema version 2": WITNESS_TEMPLATE,
}


@pytest.mark.parametrize("record", list(RECORDS.values()), ids=list(RECORDS))
def test_a_witness_file_read_into_the_typed_record_is_written_back_byte_for_byte(
    tmp_path: Path, record: dict[str, Any]
):
    found = tmp_path / "found" / witness.file_name(record["assertion_id"], record["witness_hash"])
    store.save_artifact(found, "witness", record)  # as `check` writes it
    typed = witness.read(found)
    again = tmp_path / "again" / found.name
    store.save_artifact(again, "witness", typed.to_json())
    assert again.read_bytes() == found.read_bytes() == canonical.artifact_bytes(record)
    assert typed.file_name == found.name
