"""YAML read as plain data, within bounds."""

from __future__ import annotations

import pytest

from compaction_inspector.core.yamlfile import YAMLBoundError, load


def test_tags_beyond_json_read_as_what_they_are_written_as() -> None:
    text = (
        "a: !!binary aGk=\nb: 2001-12-14\nc: !!set {x, y}\nd: !!omap [{k: 1}]\ne: '\\ud800'\nf: \"\\ud800\"\n"
    )
    assert load(text) == {"a": "aGk=", "b": "2001-12-14", "c": ["x", "y"], "d": [{"k": 1}], "e": "\\ud800",
                          "f": "\ufffd"}  # fmt: skip


def test_aliases_within_the_bound_are_kept() -> None:
    assert load("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a: &a [*a]\n", "refers to a node that holds it"),
        ("x: " + "[" * 300 + "]" * 300, "nests deeper than 256 levels"),
        ("a: &a [1,1,1,1,1,1,1,1,1,1]\n"
         + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcde", "bcdef",
                                                                                  strict=True)),
         "expand it by more than 100,000 nodes"),
        ("a: " + "9" * 5000, "digits"),
    ],
)  # fmt: skip
def test_a_document_past_a_bound_is_refused(text: str, said: str) -> None:
    with pytest.raises(YAMLBoundError, match=said):
        load(text)
