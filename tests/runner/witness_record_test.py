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
from witness_gate.errors import WitnessGateError

# witness_records.json: one witness of each kind `check` writes, as this suite's runs
# wrote them (histories cut to two entries: a history is passed on as it is): a property's
# search shrunk from another first failing payload, one under a declared condition (its hash
# over the condition and the payload, schema version 5), a
# `rejects=` payload the property accepted, a @given test (its payload the choices
# Hypothesis saved), a @given test whose failing call ended the worker (the witness is the
# search up to that case), and a state machine (the steps Hypothesis printed). With them,
# the schema version 2 witness the conditions tests hold.
FOUND = json.loads((Path(__file__).parent / "witness_records.json").read_text("utf-8"))
CONDITIONED = FOUND["property under a declared condition"]
# Found before version 5: a condition, and a hash over the payload alone, which still loads.
BEFORE_VERSION_5 = {
    **CONDITIONED,
    "schema_version": 3,
    "witness_hash": canonical.payload_hash(CONDITIONED["payload"]),
    "unshrunk": {**CONDITIONED["unshrunk"], "witness_hash": canonical.payload_hash(CONDITIONED["unshrunk"]["payload"])},
}
RECORDS = {
    **FOUND,
    "property under a declared condition, version 3": BEFORE_VERSION_5,
    # Declared, and the workers' fixed environment: present, empty, and its hash the payload's.
    "property under the declared default environment": {**BEFORE_VERSION_5, "condition": {}},
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


@pytest.mark.parametrize(
    "edit",
    [
        {"condition": {"SHOP_REGION": "EU"}},  # another condition's witness, under this one's hash
        {"schema_version": 3},  # read as a hash over the payload alone
    ],
    ids=["condition edited", "version lowered"],
)
def test_a_witness_whose_hash_no_longer_covers_its_condition_is_refused(tmp_path: Path, edit: dict[str, Any]):
    """A version 5 witness's hash covers its condition: edited to another condition, or lowered
    to a version whose hash is the payload's alone, the recorded hash no longer matches."""
    record = {**CONDITIONED, **edit}
    path = tmp_path / witness.file_name(record["assertion_id"], record["witness_hash"])
    store.save_artifact(path, "witness", record)
    with pytest.raises(WitnessGateError, match="/witness_hash: does not match the"):
        witness.read(path)
