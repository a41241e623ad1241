"""Tool-call arguments parsed as far as they go while they stream."""

from __future__ import annotations

import json

from pi_tui.ai.partial_json import PartialJson

ARGS = {
    "path": "src/app.py",
    "edits": [{"oldText": 'Hello\n "quoted" \\ back', "newText": "Hi \u2603", "count": -12.5e3, "ok": True}],
    "empty": {},
    "nothing": None,
}


def test_every_prefix_gives_a_dict_that_grows_toward_the_result() -> None:
    text = json.dumps(ARGS)
    parser = PartialJson()
    seen_paths = []
    for char in text:
        value = parser.feed(char)
        assert isinstance(value, dict)
        seen_paths.append(value.get("path"))
    assert parser.final() == ARGS
    assert "src/a" in seen_paths  # the path was visible while it streamed
    assert seen_paths[-1] == "src/app.py"


def test_string_values_stream_character_by_character() -> None:
    parser = PartialJson()
    parser.feed('{"content": "line 1\\nline')
    assert parser.feed(" 2") == {"content": "line 1\nline 2"}


def test_dangling_keys_and_escapes_do_not_break() -> None:
    parser = PartialJson()
    assert parser.feed('{"a": 1, "b') == {"a": 1}
    assert parser.feed('":') == {"a": 1}
    assert parser.feed(' "x\\') == {"a": 1, "b": "x"}
    assert parser.feed('"y"}') == {"a": 1, "b": 'x"y'}


def test_empty_and_broken_final() -> None:
    assert PartialJson().final() == {}
    parser = PartialJson()
    parser.feed('{"a": [1, 2')
    assert parser.final() == {"a": [1, 2]}
