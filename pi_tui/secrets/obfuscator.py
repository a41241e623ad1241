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

Inbound, :meth:`reveal_text` turns every placeholder this obfuscator has handed out back into
its value; one it does not know (the model made it up) stays as it is.

:meth:`might_hide` answers for an encoded request body with a single pass over its bytes (the
plain values in their raw and JSON-escaped forms, the built-in patterns loosened so escaping
cannot hide a match), so a request with nothing to hide, the usual case, costs one C-speed scan.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, AnyStr

from pi_tui.secrets.entries import SecretEntry

PLACEHOLDER = re.compile(r"<<secret:[0-9a-f]{10}>>")
_LOOSE_ANCHORS = re.compile(r"\\b|\(\?!\[[^\]]*\]\)")
TOKEN_CLASSES = ("A-Za-z0-9", "A-Za-z0-9_\\-", "A-Za-z0-9_\\-+/=.~")
"""Character classes of plain values, narrowest first: each value is looked for inside runs of
the narrowest class that holds it (random keys: letters and digits, so the fewest runs)."""
_WORD = re.compile(r"\w")
_FEW_FORMS = 16
"""Up to this many plain forms, the bytes check is one ``find`` each (memchr speed); with more,
a bytes check would cost as much as hiding itself, which then answers (remembered per text)."""
_MEMO_CHARS = 256_000_000
"""Characters of text whose hidden form is remembered before the memory starts over."""


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


_RUN, _GAP = ord("a"), ord(" ")


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


def json_escaped(value: str) -> str:
    """How ``value`` looks inside a JSON string as pi-tui writes request bodies (orjson)."""
    return json.dumps(value, ensure_ascii=False)[1:-1]


@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    mode: str = "obfuscate"
    replacement: str | None = None
    word_start: bool = False
    """A match counts only where a word starts (the built-ins)."""


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

    def __post_init__(self) -> None:
        classes: list[list[str]] = [[] for _ in TOKEN_CLASSES]
        other = []
        matchers = [re.compile(f"[{chars}]+") for chars in TOKEN_CLASSES]
        for value in self.plain:
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
                self._classes.append((table, needle, re.compile(trie_pattern(values))))
        source = trie_pattern(other)
        self._other = re.compile(source) if source else None
        forms = sorted(
            {
                form.encode("utf-8", "surrogatepass")
                for value in self.plain
                for form in (value, json_escaped(value))
            }
        )
        self._forms = forms if len(forms) <= _FEW_FORMS else None
        loose = [_LOOSE_ANCHORS.sub("", pattern.regex.pattern).encode("utf-8") for pattern in self.patterns]
        self._loose = [re.compile(source) for source in loose if source]
        self._shortest = min((len(value) for value in self.plain), default=1) if not self.patterns else 1
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
        if self._classes:
            # One byte per character (anything not ASCII becomes "?", in no class), so the
            # positions are the text's; bytes.translate and find run at memory speed.
            as_bytes = text.encode("ascii", "replace")
            for table, needle, trie in self._classes:
                for start, end in _runs(as_bytes.translate(table), needle):
                    self._plain_spans(trie, text, start, end, found)
        if self._other is not None:
            self._plain_spans(self._other, text, 0, len(text), found)
        for pattern in self.patterns:
            replace = pattern.mode == "replace"
            for match in pattern.regex.finditer(text):
                start, end = match.span()
                if end > start and not (pattern.word_start and start and _WORD.match(text, start - 1)):
                    found.append((start, end, replace))
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

    def _plain_spans(
        self, trie: re.Pattern[str], text: str, begin: int, stop: int, found: list[tuple[int, int, bool]]
    ) -> None:
        plain = self.plain
        for match in trie.finditer(text, begin, stop):
            start, end = match.span()
            replace = plain[match.group()].mode == "replace"
            position = start + 1
            while position < end:  # a value that starts inside this one and runs on
                inner = trie.match(text, position, stop)
                if inner is not None and inner.end() > end:
                    end = inner.end()
                    replace = replace or plain[inner.group()].mode == "replace"
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
        placeholder = self.placeholder(value)
        self._placeholders[placeholder] = value
        return placeholder

    def _stand_in(self, value: str) -> str:
        entry = self.plain.get(value)
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
        return PLACEHOLDER.sub(lambda m: placeholders.get(m.group(), m.group()), text)

    def reveal(self, value: Any) -> Any:
        """A copy of tool-call arguments with the placeholders turned back into the values."""
        if isinstance(value, str):
            return self.reveal_text(value)
        if isinstance(value, dict):
            return {key: self.reveal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.reveal(item) for item in value]
        return value
