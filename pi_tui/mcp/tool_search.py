"""``tool_search``: how the model finds MCP tools that are not declared to it, and declares them.

Servers with ``deferred`` exposure keep their tools out of the request until the model asks for
them: ``tool_search`` ranks the searchable tools that are not active yet against a query and
names the best ones in its result's ``details["loaded"]``. Nothing else records the loading:
the agent declares, for each model call, the tools named by the ``tool_search`` results on the
current branch (:func:`loaded_on_branch`), so ``/tree``, resume and fork keep exactly the tools
loaded on the path they show, as in pi 1.x.

The ranker ranks as pi 1.5.2's does (same tokens, fields, weights and order), so a query picks
the same tools in both. One difference: pi splits text written without spaces (Chinese,
Japanese) with ICU's dictionary; Python has no such segmenter, so here each Han and Hiragana
character is a word of its own.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from pi_tui.messages import ToolResultMessage
from pi_tui.tools.base import ToolContext, ToolError, ToolResult

TOOL_SEARCH_TOOL = "tool_search"
DEFAULT_LIMIT = 8

K1 = 1.2
B = 0.75
NAME_WEIGHT = 3.0
"""A query word in the tool's name counts this many times its IDF: more than any number of
mentions in the description (a description match is at most ``K1 + 1`` times the IDF)."""
NAMESPACE_WEIGHT = 0.5
"""A query word in the server's name or description: shared by all its tools, so it helps find
the server more than the tool."""

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
    ]
)

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_ASCII_WORDS = re.compile(r"[a-z0-9 ]*")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_PLURAL_ES = re.compile(r"(ches|shes|sses|xes|zes)$")
_NOT_IDENTIFIER = re.compile(r"[^a-z0-9_$]")
_NEWLINE = re.compile(r"\r?\n")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _stem(word: str) -> str:
    """A naive singular, so ``issues`` finds ``issue`` and ``searches`` finds ``search``."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and _PLURAL_ES.search(word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _word_character(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN"


def _unspaced(char: str) -> bool:
    """Han ideographs and Hiragana: scripts written without spaces between words."""
    code = ord(char)
    return (
        0x3040 <= code <= 0x309F
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x3134F
    )


def _segment(word: str) -> list[str]:
    """A run of letters split where ICU would split it: around each Han or Hiragana character."""
    pieces: list[str] = []
    current = ""
    for char in word:
        if _unspaced(char):
            if current:
                pieces.append(current)
                current = ""
            pieces.append(char)
        else:
            current += char
    if current:
        pieces.append(current)
    return pieces


def tokenize(text: str) -> list[str]:
    """The words of ``text`` for ranking: identifier parts, lower case, no stop words, singular.

    ``readFile`` and ``HTTPServer`` split into words; everything but letters, marks and digits
    separates words (so ``_`` and ``-`` do); ASCII words lose a plural ending.
    """
    normalized = unicodedata.normalize("NFC", text)
    normalized = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", normalized)).lower()
    normalized = "".join(char if _word_character(char) else " " for char in normalized)
    if _ASCII_WORDS.fullmatch(normalized):
        words = normalized.split(" ")
    else:
        words = [piece for word in normalized.split() for piece in _segment(word)]
    return [
        _stem(word) if _ASCII_WORD.fullmatch(word) else word
        for word in words
        if word and word not in STOP_WORDS
    ]


@dataclass(frozen=True, slots=True)
class SearchEntry:
    """One tool the search may load: its name and what is known about it and its server."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)
    """The input schema: its descriptions and property names are searched too."""
    namespace_name: str | None = None
    """``mcp__<server>`` (see :func:`pi_tui.mcp.naming.namespace`); None for a tool of no server."""
    namespace_description: str | None = None
    """The server's configured description, and/or its instructions."""


def _resolve_ref(ref: str, root: dict[str, Any]) -> Any:
    """The subschema a local ``$ref`` (``#``, ``#/$defs/Item``) names in ``root``, else None."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    current: Any = root
    for segment in (part for part in ref[2:].split("/") if part):
        if _BAD_ESCAPE.search(segment):
            return None
        key = unquote(segment).replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current if isinstance(current, dict) else None


def _schema_text(schema: Any, root: dict[str, Any], parts: list[str], seen: set[int]) -> None:
    """Descriptions and property names of ``schema``, following local references once each."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve_ref(ref, root)
        if target is not None and id(target) not in seen:
            seen.add(id(target))
            _schema_text(target, root, parts, seen)
    description = schema.get("description")
    if isinstance(description, str):
        parts.append(description)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            parts.append(str(name))
            _schema_text(sub, root, parts, seen)
    _schema_text(schema.get("items"), root, parts, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                _schema_text(variant, root, parts, seen)


@dataclass(slots=True)
class _Indexed:
    name: str
    name_terms: set[str]
    local_terms: list[str]
    text_counts: dict[str, int]
    text_length: int
    namespace_terms: set[str]


def _index(entry: SearchEntry) -> _Indexed:
    parts = [entry.description]
    _schema_text(entry.parameters, entry.parameters, parts, {id(entry.parameters)})
    text = " ".join(part for part in parts if part.strip())
    counts: dict[str, int] = {}
    for term in tokenize(text):
        counts[term] = counts.get(term, 0) + 1
    namespace_text = (
        f"{entry.namespace_name} {entry.namespace_description or ''}" if entry.namespace_name else ""
    )
    return _Indexed(
        name=entry.name,
        name_terms=set(tokenize(entry.name)),
        local_terms=list(dict.fromkeys(tokenize(entry.name.split("__")[-1]))),
        text_counts=counts,
        text_length=sum(counts.values()),
        namespace_terms=set(tokenize(namespace_text)),
    )


def _identifier(name: str) -> str:
    """Lower case with characters outside identifiers as ``_``, so ``dev-radius`` is ``dev_radius``."""
    return _NOT_IDENTIFIER.sub("_", name.strip().lower())


def _names_exactly(query: str, name: str) -> bool:
    """Whether the whole query is the tool's name, or its end after a ``__``."""
    normalized = _identifier(name)
    return normalized == query or normalized.endswith(f"__{query}")


def rank(query: str, entries: Sequence[SearchEntry], limit: int) -> list[tuple[str, float]]:
    """The best ``limit`` tools for ``query``, best first, as (name, score).

    Okapi BM25 over the description and schema text, with the name and the namespace as extra
    fields. Order: a query that is exactly a tool's name first; then tools matching more of the
    query's words, whatever their scores; then score. A tool whose whole local name is in the
    query (``app`` in ``peekaboo app``) gains one more match of every query word. Ties keep the
    entries' order.
    """
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not entries or limit <= 0:
        return []
    indexed = [_index(entry) for entry in entries]
    average = sum(doc.text_length for doc in indexed) / len(indexed) or 1
    idf: dict[str, float] = {}
    for term in terms:
        frequency = sum(
            1
            for doc in indexed
            if term in doc.name_terms or term in doc.text_counts or term in doc.namespace_terms
        )
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    full_name_bonus = 0.0
    for value in idf.values():
        full_name_bonus += value
    exact_query = _identifier(query)
    query_terms = set(terms)
    scored: list[tuple[bool, int, float, str]] = []
    for doc in indexed:
        norm = K1 * (1 - B + (B * doc.text_length) / average)
        score = 0.0
        covered = 0
        for term in terms:
            count = doc.text_counts.get(term, 0)
            weight = (
                (NAME_WEIGHT if term in doc.name_terms else 0.0)
                + (NAMESPACE_WEIGHT if term in doc.namespace_terms else 0.0)
                + (count * (K1 + 1)) / (count + norm)
            )
            if weight > 0:
                covered += 1
            score += idf[term] * weight
        if score == 0:
            continue
        if doc.local_terms and all(term in query_terms for term in doc.local_terms):
            score += full_name_bonus
        scored.append((_names_exactly(exact_query, doc.name), covered, score, doc.name))
    scored.sort(key=lambda match: (not match[0], -match[1], -match[2]))
    return [(name, score) for _exact, _covered, score, name in scored[:limit]]


def _first_line(text: str) -> str:
    return _NEWLINE.split(text.strip())[0]


def _limit(value: Any) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError("limit must be a whole number above 0")
    if isinstance(value, float) and not value.is_integer():
        raise ToolError("limit must be a whole number above 0")
    if value <= 0:
        raise ToolError("limit must be a whole number above 0")
    return int(value)


class ToolSearchTool:
    """The ``tool_search`` agent tool over a catalogue of tools not declared yet."""

    name = TOOL_SEARCH_TOOL
    label = "Tool search"
    description = (
        "Find tools that have not been declared to you yet, such as the tools of MCP servers, by "
        "searching their names, descriptions and parameters. The best matches are declared for "
        "your next call, so call them from your next message on. Search here whenever a task "
        "might need a tool of an MCP server or another tool you do not see."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words describing the tool you need, or its name."},
            "limit": {
                "type": "number",
                "description": f"How many tools to declare at most (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["query"],
    }

    def __init__(
        self,
        catalogue: Callable[[], list[SearchEntry]],
        wait_ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """``catalogue``: the searchable tools not active yet, read at each call (servers come
        and go). ``wait_ready``: awaited first, so a search made while servers are still
        connecting sees their tools."""
        self._catalogue = catalogue
        self._wait_ready = wait_ready

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("query must not be empty")
        limit = _limit(args.get("limit"))
        if self._wait_ready is not None:
            await self._wait_ready()
        entries = self._catalogue()
        by_name = {entry.name: entry for entry in entries}
        loaded = [name for name, _score in rank(query, entries, limit)]
        if not loaded:
            text = "No tool not yet declared matches that query."
        else:
            plural = "" if len(loaded) == 1 else "s"
            lines = [f"- {name}: {_first_line(by_name[name].description)}" for name in loaded]
            text = f"{len(loaded)} tool{plural} declared from your next call on:\n" + "\n".join(lines)
        return ToolResult.text(text, {"loaded": loaded})


def loaded_on_branch(messages: Iterable[Any]) -> set[str]:
    """PURE: the tools ``tool_search`` loaded on this branch, from its results' ``details``.

    Failed searches load nothing. Results read back from a session file as plain dicts
    (``toolName``, ``isError``) count as well as :class:`ToolResultMessage` objects.
    """
    names: set[str] = set()
    tool: Any
    failed: Any
    details: Any
    for message in messages:
        if isinstance(message, ToolResultMessage):
            tool, failed, details = message.tool_name, message.is_error, message.details
        elif isinstance(message, dict) and message.get("role") == "toolResult":
            tool, failed, details = message.get("toolName"), message.get("isError"), message.get("details")
        else:
            continue
        if tool != TOOL_SEARCH_TOOL or failed or not isinstance(details, dict):
            continue
        loaded = details.get("loaded")
        if isinstance(loaded, list):
            names.update(name for name in loaded if isinstance(name, str))
    return names
