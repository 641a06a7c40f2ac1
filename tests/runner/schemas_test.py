import json

import jsonschema
import pytest

from witness_gate import schemas
from witness_gate.errors import WitnessGateError


@pytest.mark.parametrize("name", schemas.NAMES)
def test_each_schema_is_valid_2020_12_and_closed(name):
    document = json.loads(schemas.schema_text(name))
    jsonschema.Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"].endswith(f"/{name}.schema.json")
    assert document["additionalProperties"] is False
    assert "schema_version" in document["required"]


def test_bad_artifact_error_names_the_file_and_the_pointer():
    lock = {"schema_version": 1, "fixture": {"path": "f.json", "sha256": "AB" * 32, "size": 1}}
    with pytest.raises(WitnessGateError) as error:
        schemas.validate("lock", lock, "x.lock")
    assert str(error.value).startswith("x.lock: /")


def test_date_time_is_really_checked():
    freeze = {
        "schema_version": 1,
        "assertion_id": "p",
        "fixture_digest": "a" * 64,
        "witness_hash": "b" * 64,
        "failures": 1,
        "runs": 5,
        "created_at": "2026-12-02T00:00:00Z",
        "expires_at": "tomorrow",
    }
    with pytest.raises(WitnessGateError, match="/expires_at"):
        schemas.validate("freeze", freeze, "f.json")
    schemas.validate("freeze", {**freeze, "expires_at": "2026-12-03T00:00:00Z"}, "f.json")


def test_unknown_schema_name_is_refused():
    with pytest.raises(WitnessGateError, match="unknown schema"):
        schemas.schema_text("nope")
