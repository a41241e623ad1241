"""Hiding secrets in what goes out, and putting them back in what comes in.

Outbound, :meth:`Obfuscator.hide_text` finds every secret in a text with a few passes whose
cost does not grow with the number of secrets. Plain values made of token characters (letters,
digits, ``_-+/=.~``: keys, tokens, most passwords) can only occur inside a run of such characters
at least as long as the shortest of them, so one fast pass finds those runs and a regex built as
a trie of the values (the longest value wins at each position) looks only inside them; the other
plain values get a trie pass over the whole text; each pattern (built-in and the user's
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, AnyStr

from pi_tui.secrets.entries import SecretEntry

PLACEHOLDER = re.compile(r"<<secret:[0-9a-f]{10}>>")
_LOOSE_ANCHORS = re.compile(r"\\b|\(\?!\[[^\]]*\]\)")
TOKEN_CHARS = "A-Za-z0-9_\\-+/=.~"
_TOKEN_CHAR = re.compile(f"[{TOKEN_CHARS}]")
_WORD = re.compile(r"\w")
_FEW_FORMS = 12
"""Up to this many plain forms, the bytes check is one ``find`` each (memchr speed)."""


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
    _trie: re.Pattern[str] | None = None
    _runs: re.Pattern[str] | None = None
    _other: re.Pattern[str] | None = None
    _forms: list[bytes] | None = None
    _loose: list[re.Pattern[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        simple = [value for value in self.plain if all(_TOKEN_CHAR.match(char) for char in value)]
        other = [value for value in self.plain if value not in set(simple)]
        source = trie_pattern(simple)
        self._trie = re.compile(source) if source else None
        self._runs = re.compile(f"[{TOKEN_CHARS}]{{{min(map(len, simple))},}}") if simple else None
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
        if self._forms is None:
            loose.append(trie_pattern(forms) or b"")
        self._loose = [re.compile(source) for source in loose if source]
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
        if self._runs is not None and self._trie is not None:
            for run in self._runs.finditer(text):
                self._plain_spans(self._trie, text, run.start(), run.end(), found)
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
        """A copy of a JSON-like value with every string hidden (keys are left: names, not data)."""
        if isinstance(value, str):
            return self.hide_text(value)
        if isinstance(value, dict):
            return {key: self.hide(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.hide(item) for item in value]
        return value

    def might_hide(self, payload: bytes) -> bool:
        """Whether an encoded body may hold a secret (False is certain; True needs :meth:`hide`)."""
        if self.user_regexes:
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
