"""The incremental partial-JSON parser gives the same answer as re-parsing the whole text, fast.

``Reference`` (tests/support/partial_json_reference.py) is the previous implementation (whole
text re-parsed on every delta), kept as the definition of the right answer for every prefix.
"""

from __future__ import annotations

import json
import random
import time

import orjson
import pytest

from pi_tui.ai import partial_json
from pi_tui.ai.partial_json import PartialJson
from tests.support.partial_json_reference import Reference

# --- random documents, written out by hand so every JSON spelling shows up ---------------------

_PIECES = [
    "a",
    "b",
    " ",
    "é",
    "\u3000",
    "\u00a0",
    "☃",
    "😀",
    '\\"',
    "\\\\",
    "\\n",
    "\\t",
    "\\/",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\u0041",
    "x y",
    "\\u2028",
]


def _ws(rng: random.Random) -> str:
    return rng.choice(["", "", " ", "\n  ", "\t", " \r\n"])


def _string(rng: random.Random) -> str:
    return '"' + "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 8))) + '"'


def _number(rng: random.Random) -> str:
    return rng.choice(["0", "-0", "7", "-12", "3.25", "-0.5e3", "1E+9", "2e-2", "120", "1.5E10"])


def _value(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(10 if depth < 4 else 6)
    if kind < 3:
        return _string(rng)
    if kind < 5:
        return _number(rng)
    if kind == 5:
        return rng.choice(["true", "false", "null"])
    if kind < 8:
        return _object(rng, depth + 1)
    items = [_ws(rng) + _value(rng, depth + 1) + _ws(rng) for _ in range(rng.randrange(0, 5))]
    return "[" + ",".join(items) + "]"


def _object(rng: random.Random, depth: int) -> str:
    keys = ["path", "content", "a", "", 'k\\"q', "é", "edits"]
    members = [
        _ws(rng) + '"' + rng.choice(keys) + '"' + _ws(rng) + ":" + _ws(rng) + _value(rng, depth) + _ws(rng)
        for _ in range(rng.randrange(0, 6))
    ]
    return "{" + ",".join(members) + "}"


def _cuts(rng: random.Random, text: str) -> list[str]:
    pieces, position = [], 0
    while position < len(text):
        size = rng.choice([1, 1, 2, 3, 5, 8, 20, 100])
        pieces.append(text[position : position + size])
        position += size
    return pieces


def _assert_same(pieces: list[str]) -> None:
    new, old = PartialJson(), Reference()
    for index, piece in enumerate(pieces):
        got, want = new.feed(piece), old.feed(piece)
        assert got == want, (index, "".join(pieces[: index + 1]))
        assert json.dumps(got) == json.dumps(want)  # same key order too
    assert new.final() == orjson.loads("".join(pieces)) if _valid("".join(pieces)) else True


def _valid(text: str) -> bool:
    try:
        return isinstance(orjson.loads(text), dict)
    except orjson.JSONDecodeError:
        return False


def test_every_prefix_of_random_documents_matches_the_whole_text_rule() -> None:
    rng = random.Random(12)
    for _ in range(400):
        text = _ws(rng) + _object(rng, 0) + _ws(rng)
        assert _valid(text)
        _assert_same(_cuts(rng, text))
        _assert_same(list(text))


def test_broken_and_odd_texts_match_the_whole_text_rule() -> None:
    rng = random.Random(7)
    junk = ["x", ",", ":", "}", "]", "{", "[", '"', "\\", "\n", "1", " ", "\\u12"]
    for _ in range(400):
        text = list(_object(rng, 0))
        for _ in range(rng.randrange(1, 3)):
            text.insert(rng.randrange(len(text) + 1), rng.choice(junk))
        _assert_same(_cuts(rng, "".join(text)))
    for text in [
        '[{"a": 1}]',
        '"x" {"a": 1}',
        'x{"a": 1}',
        '{"a": 1} {"b": 2}',
        "   ",
        '{"a": "\\x"}',
        '{"a": 1 "b": 2}',
        '{"a" "b": "c"}',
        '{"a": [1 2], "b": "q"}',
        '{"a": "\\ud83dx"}',
    ]:
        _assert_same(list(text))
        _assert_same([text])


def test_long_open_string_is_shown_exactly_up_to_the_limit_then_geometrically(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(partial_json, "EXACT_STRING_CHARS", 500)
    parser, reference = PartialJson(), Reference()
    text = json.dumps({"path": "a.py", "content": 'line \u2603 "q"\n' * 500})
    last_shown, refreshes = 0, 0
    for position in range(0, len(text), 10):
        piece = text[position : position + 10]
        got, want = parser.feed(piece), reference.feed(piece)
        content = got.get("content", "")
        if len(content) <= 500:
            assert got == want
        else:
            assert want["content"].startswith(content)
            assert len(want["content"]) - len(content) <= len(content) // partial_json.REFRESH_FRACTION + 20
            refreshes += len(content) != last_shown
        last_shown = len(content)
    assert refreshes < 300  # about REFRESH_FRACTION * ln(growth), not one per delta
    assert parser.final() == json.loads(text)


def test_streaming_big_arguments_is_linear() -> None:
    content = ('def f(x):\n    return "value\\t" + x  # é\n' * 12000)[:400_000]
    text = json.dumps({"path": "big.py", "content": content, "note": "done"})
    parser = PartialJson()
    started = time.perf_counter()
    for position in range(0, len(text), 100):
        parser.feed(text[position : position + 100])
    elapsed = time.perf_counter() - started
    assert parser.final() == json.loads(text)
    assert parser.feed("")["content"] == content
    assert elapsed < 2.0, elapsed  # re-parsing the whole text per delta took about 30 s here
