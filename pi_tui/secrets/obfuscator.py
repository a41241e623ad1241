"""Hiding secrets in what goes out, and putting them back in what comes in.

Outbound, :meth:`Obfuscator.hide_text` finds every secret in a text with a few passes whose
cost does not grow with the number of secrets. A plain value made of token characters (letters
and digits; or with ``_-``; or with ``_-+/=.~``: keys, tokens, most passwords) can only occur
inside a run of characters of its class at least as long as the shortest value of that class,
so one fast pass per class finds those runs and a regex built as a trie of the values (the
longest value wins at each position) looks only inside them; the other plain values get a trie
pass over the whole text; each pattern (built-in and the user's
regexes) gets one pass, the built-ins on their literal prefixes. Matches that overlap, such
as one value inside another or two values sharing a stretch, are merged into one span, so no
part of either is left showing. A span becomes

- in ``obfuscate`` mode, a placeholder ``<<secret:0123456789>>``: ten hex digits of an HMAC of
  the value under a key kept in the agent dir, so the same value is always the same placeholder
  (across turns, and across restarts of a session), and the model can refer to it;
- in ``replace`` mode (any part of the span), the entry's replacement, or as many ``*`` as the
  value has characters: one way, never restored.

Every plain value is also looked for in the shapes JSON gives it (:func:`escaped_forms`): escaped
once (a value in a JSON file a tool printed, or in openai's ``function.arguments``, a JSON string
inside the request's JSON), escaped twice (a JSON file inside tool-call arguments), each with
non-ASCII and control characters as ``\\uXXXX`` or not. Such a form becomes the value's own
placeholder: to the model the escaping is transparent, as it is in its own tool calls.

Patterns are also looked for inside base64 text: each run of base64 characters is decoded and
the patterns run over the bytes; a match hides the groups of four characters that hold it.
The user's regexes (secrets.yml) run on the ``regex`` engine with a time budget per request
(:data:`REGEX_BUDGET`): one that runs over it is dropped for the rest of the run and reported
(:meth:`Obfuscator.take_refusals`), and the request goes on with the other patterns.

Inbound, :meth:`reveal_text` turns every placeholder this obfuscator has handed out back into
its value; one it does not know (the model made it up) stays as it is. In a text that is JSON
as a whole (a ``.json`` file the model writes), a placeholder sits inside a JSON string, so the
value goes in JSON-escaped and the file stays valid.

:meth:`might_hide` answers for an encoded request body with a single pass over its bytes (the
plain values in their raw and JSON-escaped forms, the built-in patterns loosened so escaping
cannot hide a match), so a request with nothing to hide, the usual case, costs one C-speed scan.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import json
import re
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, AnyStr

from pi_tui.secrets.entries import SecretEntry

_RUN_BYTE, _GAP_BYTE = ord("a"), ord(" ")
_RUN, _GAP = _RUN_BYTE, _GAP_BYTE
PLACEHOLDER = re.compile(r"<<secret:[0-9a-f]{10}>>")
_LOOSE_ANCHORS = re.compile(r"\\b|\(\?!\[[^\]]*\]\)")
TOKEN_CLASSES = ("A-Za-z0-9", "A-Za-z0-9_\\-", "A-Za-z0-9_\\-+/=.~")
"""Character classes of plain values, narrowest first: each value is looked for inside runs of
the narrowest class that holds it (random keys: letters and digits, so the fewest runs)."""
_WORD = re.compile(r"\w")
_FEW_FORMS = 32
"""Up to this many plain forms, the bytes check is one ``find`` each (memchr speed); with more,
a bytes check would cost as much as hiding itself, which then answers (remembered per text)."""
_MEMO_CHARS = 256_000_000
"""Characters of text whose hidden form is remembered before the memory starts over."""
REGEX_BUDGET = 0.25
"""Seconds one secrets.yml regex may take over one request (every text of it, base64 included)
before it is dropped: a catastrophic pattern costs one request a quarter of a second, once."""
_BASE64_TABLE = bytes(
    _RUN_BYTE if chr(code).isascii() and (chr(code).isalnum() or chr(code) in "+/_-") else _GAP_BYTE
    for code in range(256)
)
"""Marks the characters of base64 runs (standard or URL-safe; padding is not part of a run)."""
_BASE64_MIN_RUN = 20
"""The shortest built-in pattern match (a Slack token, 15 bytes) fills 20 base64 characters;
a user's regex may match less, so with one the runs looked at start at 16."""
_URLSAFE = str.maketrans("-_", "+/")


def trie_pattern(words: Iterable[AnyStr]) -> AnyStr | None:
    """A regex source matching any of ``words``, longest first at each position; None if empty.

    Single-child chains become one literal, so the nesting is as deep as the number of places
    where values part ways, not as long as the longest value (a PEM key is 3,000 characters).
    """
    root: dict[Any, Any] = {}
    empty: AnyStr | None = None
    for word in words:
        if not word:
            continue
        empty = word[:0]
        node = root
        for index in range(len(word)):
            node = node.setdefault(word[index : index + 1], {})
        node[None] = True
    if empty is None:
        return None
    bar, open_, close, optional = (
        ("|", "(?:", ")", ")?") if isinstance(empty, str) else (b"|", b"(?:", b")", b")?")
    )

    lookahead, class_close = ("(?=[", "])") if isinstance(empty, str) else (b"(?=[", b"])")

    def alternation(branches: list[tuple[AnyStr, AnyStr]]) -> AnyStr:
        """Many branches are split in halves behind a character-class look-ahead, so a position
        costs a few class tests instead of one literal test per branch."""
        if len(branches) == 1:
            return branches[0][1]
        if len(branches) <= 6:
            return open_ + bar.join(body for _, body in branches) + close
        half = len(branches) // 2
        left, right = branches[:half], branches[half:]
        chars = empty.join(re.escape(char) for char, _ in left)
        return open_ + lookahead + chars + class_close + alternation(left) + bar + alternation(right) + close

    def build(node: dict[Any, Any]) -> AnyStr:
        branches = []
        for char in sorted(key for key in node if key is not None):
            chain = [re.escape(char)]
            child = node[char]
            while len(child) == 1 and None not in child:
                (next_char,) = child
                chain.append(re.escape(next_char))
                child = child[next_char]
            branches.append((char, empty.join(chain) + build(child)))
        if not branches:
            return empty
        body = alternation(branches)
        return open_ + body + optional if None in node else body

    return build(root)


def _runs(marks: bytes, needle: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every run of ``_RUN`` bytes at least as long as ``needle``."""
    find = marks.find
    position = 0
    while True:
        start = find(needle, position)
        if start < 0:
            return
        end = find(b" ", start + len(needle))
        if end < 0:
            end = len(marks)
        yield start, end
        position = end


def json_escaped(value: str, ascii_only: bool = False) -> str:
    """How ``value`` looks inside a JSON string as pi-tui writes request bodies (orjson), or with
    ``ascii_only`` as Python's ``json.dumps`` writes it (``\\u00e9``, surrogate pairs)."""
    return json.dumps(value, ensure_ascii=ascii_only)[1:-1]


def escaped_forms(value: str) -> set[str]:
    """The shapes ``value`` takes inside JSON strings other than itself: escaped once and twice,
    each level with or without ``\\uXXXX`` for what is not ASCII. Empty for a value JSON
    leaves alone (letters, digits, most punctuation: keys and tokens)."""
    once = {json_escaped(value), json_escaped(value, True)}
    twice = {json_escaped(form, ascii_only) for form in once for ascii_only in (False, True)}
    return (once | twice) - {value}


@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    """The built-in's name, or the ``file:line`` of a secrets.yml entry."""
    regex: Any
    """A compiled ``re`` pattern (built-ins), or a ``regex`` one (the user's: it takes a timeout)."""
    mode: str = "obfuscate"
    replacement: str | None = None
    word_start: bool = False
    """A match counts only where a word starts (the built-ins)."""
    timed: bool = False
    """Runs within :data:`REGEX_BUDGET` per request (the user's regexes; ``regex`` must be a
    ``regex`` module pattern)."""


@dataclass(slots=True)
class Obfuscator:
    """Every secret of a session and the placeholders handed out so far."""

    key: bytes
    plain: dict[str, SecretEntry] = field(default_factory=dict)
    """Value -> its entry (API keys, environment values, plain secrets.yml entries)."""
    patterns: list[Pattern] = field(default_factory=list)
    user_regexes: bool = False
    """Whether any pattern came from secrets.yml (then no quick bytes check can be trusted)."""
    _placeholders: dict[str, str] = field(default_factory=dict)
    _classes: list[tuple[bytes, bytes, re.Pattern[str]]] = field(default_factory=list)
    """Per class: a translate table (class characters -> ``_RUN``, others -> ``_GAP``), a run of
    the shortest value's length, and the trie of the class's values."""
    _other: re.Pattern[str] | None = None
    _forms: list[bytes] | None = None
    _loose: list[re.Pattern[bytes]] = field(default_factory=list)
    _memo: dict[str, str] = field(default_factory=dict)
    _memo_chars: int = 0
    _shortest: int = 1
    _needles: dict[str, str] = field(default_factory=dict)
    """Every form looked for (the values and their JSON-escaped forms) -> its value."""
    _spent: dict[str, float] = field(default_factory=dict)
    """Seconds each timed pattern took in the current request."""
    _refusals: list[tuple[str, str]] = field(default_factory=list)
    """``(regex source, report)`` of patterns dropped for running over budget, not yet taken."""

    def __post_init__(self) -> None:
        needles = {value: value for value in self.plain}
        for value in self.plain:
            for form in escaped_forms(value):
                needles.setdefault(form, value)
        self._needles = needles
        classes: list[list[str]] = [[] for _ in TOKEN_CLASSES]
        other = []
        matchers = [re.compile(f"[{chars}]+") for chars in TOKEN_CLASSES]
        for value in needles:
            for index, matcher in enumerate(matchers):
                if matcher.fullmatch(value):
                    classes[index].append(value)
                    break
            else:
                other.append(value)
        self._classes = []
        for chars, values in zip(TOKEN_CLASSES, classes, strict=True):
            if values:
                member = re.compile(f"[{chars}]")
                table = bytes(_RUN if member.match(chr(code)) else _GAP for code in range(256))
                needle = bytes([_RUN]) * min(map(len, values))
                pattern = trie_pattern(values)
                assert pattern is not None  # values is not empty
                self._classes.append((table, needle, re.compile(pattern)))
        source = trie_pattern(other)
        self._other = re.compile(source) if source else None
        forms = sorted(
            {
                form.encode("utf-8", "surrogatepass")
                for needle in needles
                for form in (needle, json_escaped(needle), json_escaped(needle, True))
            }
        )
        self._forms = forms if len(forms) <= _FEW_FORMS else None
        loose = [_LOOSE_ANCHORS.sub("", pattern.regex.pattern).encode("utf-8") for pattern in self.patterns]
        self._loose = [re.compile(source) for source in loose if source]
        self._shortest = min((len(value) for value in needles), default=1) if not self.patterns else 1
        for value, entry in self.plain.items():
            if entry.mode == "obfuscate":
                self._placeholders[self.placeholder(value)] = value

    def adopt_placeholders(self, older: Obfuscator) -> None:
        """Keep answering the placeholders an earlier obfuscator (same key) handed out."""
        for placeholder, value in older._placeholders.items():
            self._placeholders.setdefault(placeholder, value)

    @property
    def handed_out(self) -> int:
        """How many placeholders this run can turn back into values."""
        return len(self._placeholders)

    @property
    def empty(self) -> bool:
        return not self.plain and not self.patterns

    def placeholder(self, value: str) -> str:
        digest = hmac.new(self.key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        return f"<<secret:{digest[:10]}>>"

    # --- outbound --------------------------------------------------------------------------------

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        """Merged ``(start, end, replace)`` spans of every secret in ``text``, in order."""
        found: list[tuple[int, int, bool]] = []
        # One byte per character (anything not ASCII becomes "?", in no class and not base64),
        # so the positions are the text's; bytes.translate and find run at memory speed.
        as_bytes = text.encode("ascii", "replace") if self._classes or self.patterns else b""
        if self._classes:
            for table, needle, trie in self._classes:
                for start, end in _runs(as_bytes.translate(table), needle):
                    self._plain_spans(trie, text, start, end, found)
        if self._other is not None:
            self._plain_spans(self._other, text, 0, len(text), found)
        for pattern in list(self.patterns):
            replace = pattern.mode == "replace"
            found.extend((start, end, replace) for start, end in self._matches(pattern, text))
        if self.patterns:
            self._base64_spans(text, as_bytes, found)
        if len(found) < 2:
            return found
        found.sort()
        merged = [found[0]]
        for start, end, replace in found[1:]:
            last_start, last_end, last_replace = merged[-1]
            if start < last_end:
                merged[-1] = (last_start, max(end, last_end), last_replace or replace)
            else:
                merged.append((start, end, replace))
        return merged

    def _matches(self, pattern: Pattern, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of ``pattern``'s matches in ``text``; a timed pattern stops at what is
        left of its budget for this request, and is then dropped (what it found so far counts)."""
        found: list[tuple[int, int]] = []
        word_start = pattern.word_start
        if not pattern.timed:
            for match in pattern.regex.finditer(text):
                start, end = match.span()
                if end > start and not (word_start and start and _WORD.match(text, start - 1)):
                    found.append((start, end))
            return found
        began = time.perf_counter()
        left = REGEX_BUDGET - self._spent.get(pattern.name, 0.0)
        try:
            for match in pattern.regex.finditer(text, timeout=max(left, 0.001)):
                start, end = match.span()
                if end > start:
                    found.append((start, end))
        except TimeoutError:
            self._refuse(pattern)
        finally:
            self._spent[pattern.name] = self._spent.get(pattern.name, 0.0) + time.perf_counter() - began
        return found

    def _refuse(self, pattern: Pattern) -> None:
        if pattern in self.patterns:
            self.patterns = [kept for kept in self.patterns if kept is not pattern]
            source = pattern.regex.pattern
            self._refusals.append(
                (
                    source,
                    f"{pattern.name}: the regex {source!r} took over {REGEX_BUDGET:g} s on one "
                    "request; it is left out from now on",
                )
            )

    def begin_request(self) -> None:
        """A new request: each timed pattern has its whole budget again."""
        self._spent.clear()

    def take_refusals(self) -> list[tuple[str, str]]:
        """``(regex source, report)`` of the patterns dropped since the last call (the report is
        one line naming the file and line)."""
        refusals, self._refusals = self._refusals, []
        return refusals

    def _base64_spans(self, text: str, as_bytes: bytes, found: list[tuple[int, int, bool]]) -> None:
        """Pattern matches inside base64 runs (``base64 token.txt``, a data URL, a Basic header).

        Every run, taken from its start in groups of four (a trailing group of two or three is
        completed with ``A``), is decoded in one call with ``AAAA`` (three zero bytes, which no
        pattern spans) between runs; each match maps back to the groups holding its bytes."""
        shortest = 16 if any(pattern.timed for pattern in self.patterns) else _BASE64_MIN_RUN
        chunks: list[str] = []
        starts: list[int] = []  # decoded offset of each run
        places: list[tuple[int, int]] = []  # (start, end) of each run in the text
        offset = 0
        marks = as_bytes.translate(_BASE64_TABLE)
        for start, end in _runs(marks, bytes([_RUN]) * shortest):
            chunk = text[start:end]
            rest = len(chunk) % 4
            if rest == 1:
                chunk = chunk[:-1]
            elif rest:
                chunk += "A" * (4 - rest)
            chunks.append(chunk)
            starts.append(offset)
            places.append((start, end))
            offset += len(chunk) // 4 * 3 + 3
        if not chunks:
            return
        try:
            decoded = binascii.a2b_base64("AAAA".join(chunks).translate(_URLSAFE)).decode("latin-1")
        except binascii.Error:
            return
        for pattern in list(self.patterns):
            replace = pattern.mode == "replace"
            for start, end in self._matches(pattern, decoded):
                index = bisect_right(starts, start) - 1
                base = starts[index]
                run_start, run_end = places[index]
                first = run_start + (start - base) // 3 * 4
                last = min(run_end, run_start + -(-(end - base) // 3) * 4)
                if first < last:
                    found.append((first, last, replace))

    def _plain_spans(
        self, trie: re.Pattern[str], text: str, begin: int, stop: int, found: list[tuple[int, int, bool]]
    ) -> None:
        needles = self._needles
        plain = self.plain
        for match in trie.finditer(text, begin, stop):
            start, end = match.span()
            replace = plain[needles[match.group()]].mode == "replace"
            position = start + 1
            while position < end:  # a value that starts inside this one and runs on
                inner = trie.match(text, position, stop)
                if inner is not None and inner.end() > end:
                    end = inner.end()
                    replace = replace or plain[needles[inner.group()]].mode == "replace"
                position += 1
            found.append((start, end, replace))

    def hide_text(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        parts = []
        last = 0
        for start, end, replace in spans:
            parts.append(text[last:start])
            value = text[start:end]
            parts.append(self._stand_in(value) if replace else self._hide(value))
            last = end
        parts.append(text[last:])
        return "".join(parts)

    def _hide(self, value: str) -> str:
        value = self._needles.get(value, value)  # an escaped form stands for its value
        placeholder = self.placeholder(value)
        self._placeholders[placeholder] = value
        return placeholder

    def _stand_in(self, value: str) -> str:
        entry = self.plain.get(self._needles.get(value, value))
        if entry is not None and entry.replacement is not None:
            return entry.replacement
        for pattern in self.patterns:
            if pattern.replacement is not None and pattern.regex.fullmatch(value):
                return pattern.replacement
        return "*" * len(value)

    def hide(self, value: Any) -> Any:
        """A JSON-like value with every string hidden (keys are left: names, not data); the very
        same object when there was nothing to hide, so the caller can skip encoding it again."""
        if isinstance(value, str):
            return self._hide_cached(value)
        if isinstance(value, dict):
            hidden = {key: self.hide(item) for key, item in value.items()}
            return value if all(hidden[key] is item for key, item in value.items()) else hidden
        if isinstance(value, list):
            items = [self.hide(item) for item in value]
            return value if all(new is old for new, old in zip(items, value, strict=True)) else items
        return value

    def _hide_cached(self, text: str) -> str:
        """:meth:`hide_text` remembered per text: each turn's request repeats the whole history,
        and only the new part of it should cost a scan."""
        if len(text) < self._shortest:
            return text
        memo = self._memo
        hidden = memo.get(text)
        if hidden is None:
            hidden = self.hide_text(text)
            if hidden == text:
                hidden = text
            self._memo_chars += len(text)
            if self._memo_chars > _MEMO_CHARS:
                memo.clear()
                self._memo_chars = len(text)
            memo[text] = hidden
        return hidden

    def might_hide(self, payload: bytes) -> bool:
        """Whether an encoded body may hold a secret (False is certain; True needs :meth:`hide`)."""
        if self.user_regexes or (self.plain and self._forms is None):
            return True
        if self._forms is not None and any(payload.find(form) >= 0 for form in self._forms):
            return True
        return any(loose.search(payload) is not None for loose in self._loose)

    # --- inbound ---------------------------------------------------------------------------------

    def reveal_text(self, text: str) -> str:
        if "<<secret:" not in text:
            return text
        placeholders = self._placeholders
        revealed = PLACEHOLDER.sub(lambda m: placeholders.get(m.group(), m.group()), text)
        if revealed == text or text.lstrip()[:1] not in ("{", "["):
            return revealed
        try:
            json.loads(text)
        except ValueError:
            return revealed
        # JSON as a whole: every placeholder is inside a JSON string, where a value holding a
        # quote or a backslash must go in escaped for the file to stay what it was.
        return PLACEHOLDER.sub(
            lambda m: json_escaped(placeholders[m.group()]) if m.group() in placeholders else m.group(), text
        )

    def reveal(self, value: Any) -> Any:
        """A copy of tool-call arguments with the placeholders turned back into the values."""
        if isinstance(value, str):
            return self.reveal_text(value)
        if isinstance(value, dict):
            return {key: self.reveal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.reveal(item) for item in value]
        return value
