import pytest
from hypothesis import given
from hypothesis import strategies as st

from witness_gate.errors import WitnessGateError
from witness_gate.ownership import owner, split_paths
from witness_gate.paths import parse_changed_paths, repo_path_problem


def test_split_paths_with_the_spec_prefixes():
    impl, oracle = ["src/"], ["tests/properties/"]
    assert split_paths(["src/a.py"], impl, oracle) == (True, False)
    assert split_paths(["tests/properties/p.py"], impl, oracle) == (False, True)
    assert split_paths(["src/a.py", "tests/properties/p.py"], impl, oracle) == (True, True)
    assert split_paths(["README.md", "srcs/x.py"], impl, oracle) == (False, False)


def test_longest_prefix_owns_nested_paths():
    # A tree that keeps its properties under src/ is not mislabelled.
    assert owner("src/properties/p.py", ["src/"], ["src/properties/"]) == "oracle"
    assert owner("src/app.py", ["src/"], ["src/properties/"]) == "impl"
    assert owner("src/gen/stub.py", ["src/"], ["tests/"], ["src/gen/stub.py"]) == "oracle"


@given(st.lists(st.sampled_from(["src/a.py", "tests/properties/b.py", "docs/c.md", "src/x/y.py"])))
def test_split_paths_is_any_of_owner(paths):
    impl, oracle = split_paths(paths, ["src/"], ["tests/properties/"])
    owners = {owner(p, ["src/"], ["tests/properties/"]) for p in paths}
    assert (impl, oracle) == ("impl" in owners, "oracle" in owners)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"src/a.py\r\n", "carriage return"),
        (b"src/a.py\n\nsrc/b.py\n", "line 2: empty path"),
        (b"./src/a.py\n", "not normalized"),
        (b"/abs/a.py\n", "absolute path"),
        (b"src/../a.py\n", "not normalized"),
        (b"src/a\x00.py\n", "NUL"),
        (b"\xff\n", "not UTF-8"),
    ],
)
def test_changed_file_list_refuses_anything_but_repository_paths(data, message):
    with pytest.raises(WitnessGateError) as error:
        parse_changed_paths(data, "changed.txt")
    assert str(error.value).startswith("changed.txt: ")
    assert message in str(error.value)


def test_changed_file_list_accepts_a_final_newline_or_none():
    assert parse_changed_paths(b"a.py\nsrc/b.py\n", "c") == ["a.py", "src/b.py"]
    assert parse_changed_paths(b"a.py", "c") == ["a.py"]
    assert parse_changed_paths(b"", "c") == []


def _reference_parse(text: str) -> list[str] | int:
    """The line-by-line rule: the paths, or the number of the first bad line."""
    body = text[:-1] if text.endswith("\n") else text
    lines = body.split("\n") if body else []
    for number, line in enumerate(lines, start=1):
        if repo_path_problem(line):
            return number
    return lines


@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(["a", "b", "/", ".", " ", "\t", "\r", "\x00", "\\", "\u2003", "\x1f", "\n"]),
            max_size=12,
        ),
        max_size=6,
    )
)
def test_fast_scan_of_a_changed_list_agrees_with_the_line_by_line_rule(chunks):
    text = "\n".join(chunks)
    expected = _reference_parse(text)
    if isinstance(expected, int):
        with pytest.raises(WitnessGateError, match=f"line {expected}:"):
            parse_changed_paths(text.encode(), "changed.txt")
    else:
        assert parse_changed_paths(text.encode(), "changed.txt") == expected


@given(
    st.lists(
        st.sampled_from(
            ["src/a.py", "src/p/x.py", "tests/properties/p.py", "README.md", "s", "src", "tests/propertiesx"]
        ),
        max_size=8,
    )
)
def test_screened_split_paths_agrees_with_owner(paths):
    impl, oracle = ["src/", "s"], ["tests/properties/", "src/p/"]
    sides = {owner(path, impl, oracle) for path in paths}
    assert split_paths(paths, impl, oracle) == ("impl" in sides, "oracle" in sides)
