import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from witness_gate.canonical import (
    NotPlainJSON,
    canonical_bytes,
    file_sha256,
    parse_json,
    payload_hash,
)
from witness_gate.errors import WitnessGateError

plain_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


def spec_witness_hash(payload):
    # The spec's own reference encoding: the hash a reviewer recomputes by hand.
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()


@given(plain_json)
def test_payload_hash_matches_the_spec_encoding(value):
    assert payload_hash(value) == spec_witness_hash(value)


@given(plain_json)
def test_canonical_bytes_round_trip(value):
    assert canonical_bytes(parse_json(canonical_bytes(value), "x")) == canonical_bytes(value)


def test_key_order_does_not_change_the_hash():
    assert payload_hash({"a": 1, "b": [1, 2]}) == payload_hash({"b": [1, 2], "a": 1})


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), (1, 2), {1, 2}, b"x", {1: "int key"}, {"k": object()}],
)
def test_values_json_would_convert_are_refused(value):
    with pytest.raises(NotPlainJSON):
        canonical_bytes({"payload": value})


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"a": 1', "invalid JSON at line 1"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b"[" * 100000, "invalid JSON"),
    ],
)
def test_parse_json_refuses_with_one_line(data, message):
    with pytest.raises(WitnessGateError) as error:
        parse_json(data, "f.json")
    assert str(error.value).startswith("f.json: ")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_file_sha256_streams_large_files(tmp_path):
    path = tmp_path / "big.bin"
    data = bytes(range(256)) * 20000  # several hash chunks, last one partial
    path.write_bytes(data)
    assert file_sha256(path) == (hashlib.sha256(data).hexdigest(), len(data))
