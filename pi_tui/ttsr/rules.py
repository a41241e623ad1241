"""TTSR rule files: parsing, discovery, bucketing, and how rules show up in prompts and listings.

Rule files are Markdown with YAML front matter, written for pi, oh-my-pi, Cursor, Windsurf,
Cline or Copilot (specs/ttsr.md, "Rule files" and "Discovery"). Nothing here may stop a session
from starting: a bad file, key or token becomes a warning (on the rule, in a
:class:`DiscoveryReport`, and on this module's logger) and everything readable is kept.

The front matter is read by a small YAML-subset parser instead of a YAML library: rule files
only use scalars, lists and block strings, the project has no YAML dependency, and a lenient
reader lets the common not-quite-YAML of rule files work (``globs: *.ts,*.tsx``, regexes with
``\\d`` in double quotes, ``[tool:edit(src/{a,b}/*.py), text]``) where a real YAML parser
would reject the whole front matter.

Main API: :func:`parse_rule_text`, :func:`discover_rules`, :func:`bucket_rules`,
:func:`system_prompt_sections`, :func:`format_rule_list`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import regex

from pi_tui.config.paths import agent_dir
from pi_tui.config.settings import TtsrSettings
from pi_tui.ttsr.model import BucketedRule, InterruptMode, Rule, ScopeToken

__all__ = [
    "CONDITION_KEYS",
    "DiscoveryReport",
    "FrontMatter",
    "RuleRegistry",
    "bucket_rules",
    "discover_rules",
    "display_path",
    "format_rule_list",
    "load_builtin_rules",
    "looks_like_file_glob",
    "parse_front_matter",
    "parse_rule_text",
    "parse_scope",
    "split_top_level",
    "system_prompt_sections",
]

logger = logging.getLogger(__name__)

CONDITION_KEYS = ("condition", "ttsr_trigger", "ttsrTrigger")
"""Front-matter keys holding the regex condition(s); the first present one is used."""

_INTERRUPT_MODES: tuple[InterruptMode, ...] = ("never", "prose-only", "tool-only", "always")
_RULE_SUFFIXES = (".md", ".mdc")
_INSTRUCTIONS_SUFFIX = ".instructions.md"

# ---------------------------------------------------------------------------------------------
# A YAML subset
# ---------------------------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}

_INT = regex.compile(r"[-+]?\d+")
_FLOAT = regex.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_BLOCK_HEADER = regex.compile(r"([|>])([-+]?)(\d?)([-+]?)\s*(?:#.*)?")
_DQ_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


@dataclass(slots=True)
class FrontMatter:
    """A rule file split into its front matter (as data) and its body."""

    data: dict[str, Any]
    body: str
    warnings: list[str] = field(default_factory=list)
    present: bool = False
    """Whether the file had a front matter block at all."""


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``text`` at a leading ``---`` ... ``---`` block and read the block as YAML.

    No opening ``---``: no front matter, the whole text is the body. No closing line: a
    warning, and again the whole text is the body (guessing where it ends would turn content
    into keys or keys into content).
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter({}, text)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            parser = _YamlSubset(lines[1:index], first_line=2)
            data = parser.parse_document()
            body = "\n".join(lines[index + 1 :])
            return FrontMatter(data, body, parser.warnings, present=True)
    return FrontMatter({}, text, ["front matter: no closing '---' line; read the file as plain content"])


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """Split on ``separator`` outside quotes, ``()``, ``[]`` and ``{}``; parts are stripped.

    Rule authors write ``tool:edit(src/{a,b}/*.py), text`` and ``[foo{1,3}, bar]``; a plain
    split would cut the glob and the regex quantifier apart.
    """
    parts: list[str] = []
    stack: list[str] = []
    quote: str | None = None
    current: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if quote is not None:
            current.append(char)
            if char == "\\" and quote == '"' and i + 1 < len(text):
                current.append(text[i + 1])
                i += 2
                continue
            if char == quote:
                quote = None
        elif char in ("'", '"') and not "".join(current).strip():
            quote = char  # only a quote that starts an item opens a string ("don't" stays plain)
            current.append(char)
        elif char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        elif char in _OPENERS:
            stack.append(_OPENERS[char])
            current.append(char)
        elif char in _CLOSERS:
            if stack and stack[-1] == char:
                stack.pop()
            current.append(char)
        elif char == separator and not stack:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current).strip())
    return [part for part in parts if part]


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _strip_comment(value: str) -> str:
    """Drop a trailing ``  # comment`` from a plain (unquoted) value."""
    for index, char in enumerate(value):
        if char == "#" and index > 0 and value[index - 1] in " \t":
            return value[:index].rstrip()
    return value


def _is_list_item(stripped: str) -> bool:
    return stripped == "-" or stripped.startswith(("- ", "-\t"))


def _split_key(stripped: str) -> tuple[str, str] | None:
    """``key: value`` -> (key, value); None when the line is not a mapping entry."""
    if stripped[:1] in ("'", '"'):
        quote = stripped[0]
        end = stripped.find(quote, 1)
        if end < 0 or not stripped[end + 1 :].lstrip().startswith(":"):
            return None
        rest = stripped[end + 1 :].lstrip()[1:]
        if rest and rest[0] not in " \t":
            return None
        return stripped[1:end], rest.strip()
    for index, char in enumerate(stripped):
        if char == ":" and (index + 1 == len(stripped) or stripped[index + 1] in " \t"):
            key = stripped[:index].strip()
            return (key, stripped[index + 1 :].strip()) if key else None
    return None


class _YamlSubset:
    """Block mappings, block lists, flow lists, scalars, ``|``/``>`` strings; nothing more.

    Anchors, tags, flow mappings and multi-document streams are not rule-file material; what
    they would be is read as a plain string. Problems are collected in :attr:`warnings` with
    the line number in the rule file.
    """

    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.i = 0
        self.warnings: list[str] = []

    def warn(self, index: int, message: str) -> None:
        self.warnings.append(f"front matter line {self.first_line + index}: {message}")

    def skip_blank(self) -> None:
        while self.i < len(self.lines) and _is_blank(self.lines[self.i]):
            self.i += 1

    def parse_document(self) -> dict[str, Any]:
        self.skip_blank()
        if self.i >= len(self.lines):
            return {}
        stripped = self.lines[self.i].strip()
        if _is_list_item(stripped) or stripped.startswith("["):
            self.warn(self.i, "front matter is not a mapping of keys; ignored")
            return {}
        data: dict[str, Any] = {}
        while True:  # a key indented less than the first one starts over at its own indent
            self.skip_blank()
            if self.i >= len(self.lines):
                return data
            data.update(self.parse_mapping(_indent_of(self.lines[self.i])))

    def parse_mapping(self, indent: int) -> dict[str, Any]:
        data: dict[str, Any] = {}
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return data
            line = self.lines[self.i]
            line_indent = _indent_of(line)
            if line_indent < indent:
                return data
            stripped = line.strip()
            if line_indent > indent:
                self.warn(self.i, f"unexpected indentation: {stripped!r} (skipped)")
                self.i += 1
                continue
            entry = _split_key(stripped)
            if entry is None:
                self.warn(self.i, f"expected 'key: value', got {stripped!r} (skipped)")
                self.i += 1
                continue
            key, value = entry
            start = self.i
            self.i += 1
            if key in data:
                self.warn(start, f"key {key!r} given twice; the last one counts")
            data[key] = self.parse_value(value, indent, start)

    def parse_list(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return items
            line = self.lines[self.i]
            stripped = line.strip()
            if _indent_of(line) != indent or not _is_list_item(stripped):
                return items
            start = self.i
            self.i += 1
            items.append(self.parse_value(stripped[1:].strip(), indent, start))

    def parse_value(self, value: str, indent: int, start: int) -> Any:
        """The value after ``key:`` or ``-`` on line ``start``; may read the lines below it."""
        if not value or value.startswith("#"):
            return self.parse_nested(indent)
        header = _BLOCK_HEADER.fullmatch(value)
        if header:
            keep = "+" in (header.group(2) + header.group(4))
            strip = "-" in (header.group(2) + header.group(4))
            explicit = int(header.group(3)) if header.group(3) else None
            return self.parse_block_scalar(header.group(1), indent, keep, strip, explicit)
        pieces = [value]
        if value.startswith("[") and _matching_bracket(value) < 0:
            # A flow list may run over several lines, its "]" even back at the key's indent.
            while self.i < len(self.lines) and _matching_bracket(" ".join(pieces)) < 0:
                if not _is_blank(self.lines[self.i]):
                    pieces.append(self.lines[self.i].strip())
                self.i += 1
            return self.parse_inline(" ".join(pieces), start)
        # A plain or quoted scalar continues on the lines indented deeper than its key.
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip() or _indent_of(line) <= indent:
                break
            pieces.append(line.strip())
            self.i += 1
        return self.parse_inline(" ".join(pieces), start)

    def parse_nested(self, indent: int) -> Any:
        """What follows an empty ``key:``: an indented block, a same-indent list, or null."""
        self.skip_blank()
        if self.i >= len(self.lines):
            return None
        line = self.lines[self.i]
        line_indent = _indent_of(line)
        stripped = line.strip()
        if _is_list_item(stripped) and line_indent >= indent:
            return self.parse_list(line_indent)
        if line_indent > indent:
            return self.parse_mapping(line_indent)
        return None

    def parse_block_scalar(
        self, style: str, indent: int, keep: bool, strip: bool, explicit: int | None
    ) -> str:
        raw: list[str] = []
        block_indent = indent + explicit if explicit else None
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip():
                line_indent = _indent_of(line)
                if block_indent is None:
                    if line_indent <= indent:
                        break
                    block_indent = line_indent
                if line_indent < block_indent:
                    break
                raw.append(line[block_indent:])
            else:
                raw.append("")
            self.i += 1
        trailing = 0
        while raw and raw[-1] == "":
            raw.pop()
            trailing += 1
        text = "\n".join(raw) if style == "|" else _fold(raw)
        if not raw:
            return ""
        if strip:
            return text
        if keep:
            return text + "\n" * (trailing + 1)
        return text + "\n"

    def parse_inline(self, value: str, index: int) -> Any:
        """A one-line value: flow list, quoted string or plain scalar."""
        if value.startswith("["):
            end = _matching_bracket(value)
            if end < 0:
                self.warn(index, f"unclosed '[' in {value!r}; read as text")
                return value
            tail = _strip_comment(value[end + 1 :]).strip()
            if tail:
                self.warn(index, f"text after ']' ignored: {tail!r}")
            return [self.parse_inline(item, index) for item in split_top_level(value[1:end])]
        if value[:1] in ("'", '"'):
            parsed = self.parse_quoted(value, index)
            if parsed is not None:
                return parsed
        return _plain_scalar(_strip_comment(value))

    def parse_quoted(self, value: str, index: int) -> str | None:
        """A quoted scalar; None when the quote does not close (then it is read as plain)."""
        quote = value[0]
        out: list[str] = []
        i = 1
        while i < len(value):
            char = value[i]
            if quote == "'" and char == "'":
                if value[i + 1 : i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                break
            if quote == '"' and char == '"':
                break
            if quote == '"' and char == "\\" and i + 1 < len(value):
                i = self._escape(value, i, out, index)
                continue
            out.append(char)
            i += 1
        else:
            self.warn(index, f"unclosed quote in {value!r}; read as text")
            return None
        tail = _strip_comment(value[i + 1 :]).strip()
        if tail:
            self.warn(index, f"text after the closing quote ignored: {tail!r}")
        return "".join(out)

    def _escape(self, value: str, i: int, out: list[str], index: int) -> int:
        """Decode the escape at ``value[i]`` (a backslash); return the index after it.

        Escapes YAML knows mean what they mean in YAML (so ``"\\b"`` is a backspace, as in omp);
        others (``"\\d"``, ``"\\s"``) would make real YAML reject the file: they are kept as
        written, which is what a regex author meant, with a hint to use single quotes.
        """
        code = value[i + 1]
        if code in _DQ_ESCAPES:
            out.append(_DQ_ESCAPES[code])
            return i + 2
        if code in _HEX_ESCAPES:
            digits = value[i + 2 : i + 2 + _HEX_ESCAPES[code]]
            if len(digits) == _HEX_ESCAPES[code] and all(c in "0123456789abcdefABCDEF" for c in digits):
                out.append(chr(int(digits, 16)))
                return i + 2 + len(digits)
        self.warn(index, f"'\\{code}' is not a YAML escape; kept as written (use single quotes for regexes)")
        out.append("\\" + code)
        return i + 2


def _matching_bracket(value: str) -> int:
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(value):
        char = value[i]
        if quote is not None:
            if char == "\\" and quote == '"':
                i += 2
                continue
            if char == quote:
                quote = None
        elif char in ("'", '"') and value[i - 1 : i] in ("[", ",", " ", ""):
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _fold(lines: list[str]) -> str:
    """``>`` folding: lines join with spaces, blank lines become newlines, indented lines stay."""
    out = ""
    previous_plain = False
    for line in lines:
        if not line:
            out += "\n"
            previous_plain = False
            continue
        plain = not line.startswith((" ", "\t"))
        if out and previous_plain and plain and not out.endswith("\n"):
            out += " "
        elif out and not out.endswith("\n"):
            out += "\n"
        out += line
        previous_plain = plain
    return out


def _plain_scalar(value: str) -> Any:
    lowered = value.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if lowered in ("null", "~", ""):
        return None
    if _INT.fullmatch(value):
        return int(value)
    if _FLOAT.fullmatch(value) and any(c.isdigit() for c in value):
        return float(value)
    return value


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------

_GLOB_CHARS = frozenset("?*[]{}")
_REGEX_ONLY_CHARS = frozenset("\\^$+|()")
_EXTENSION_GLOB = regex.compile(r"\*\.[\w{},.-]+")
_SCOPE_TOKEN = regex.compile(
    r"(?P<kind>[A-Za-z_][\w.-]*)(?::(?P<tool>[\w.-]*))?\s*(?:\((?P<glob>.*)\))?", regex.DOTALL
)


def looks_like_file_glob(token: str) -> bool:
    """Whether a ``condition`` token is a file glob (``*.py``, ``src/**/*.ts``), not a regex.

    Cursor-style rules put globs among the conditions; as regexes they are invalid or
    meaningless (``*.py``), so they are turned into edit/write scopes instead.
    """
    if any(char in _REGEX_ONLY_CHARS for char in token):
        return False
    if not any(char in _GLOB_CHARS for char in token):
        return False
    return "/" in token or _EXTENSION_GLOB.fullmatch(token) is not None


def parse_scope(value: Any) -> tuple[tuple[ScopeToken, ...] | None, list[str]]:
    """Read a ``scope`` value (string or list); returns (tokens or None when absent, warnings).

    A scope that was given but has no valid token is ``()`` (reaches nothing, the manager
    rejects it) rather than None: falling back to the default scope would widen a rule its
    author meant to narrow.
    """
    warnings: list[str] = []
    if value is None or value == "" or value == []:
        return None, warnings
    if isinstance(value, str):
        raw_tokens = split_top_level(value)
    elif isinstance(value, list):
        raw_tokens = [str(item).strip() for item in value if item is not None and str(item).strip()]
    else:
        return (), [f"scope: expected a string or a list, got {value!r}; the rule reaches nothing"]
    tokens: list[ScopeToken] = []
    for raw in raw_tokens:
        token = _parse_scope_token(_unquote(raw))
        if token is None:
            warnings.append(f"scope: cannot read token {raw!r} (skipped)")
        elif token not in tokens:
            tokens.append(token)
    if not tokens:
        warnings.append("scope: no usable token; the rule reaches nothing")
    return tuple(tokens), warnings


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in ("'", '"'):
        return text[1:-1].strip()
    return text


def _parse_scope_token(text: str) -> ScopeToken | None:
    match = _SCOPE_TOKEN.fullmatch(text)
    if match is None:
        return None
    kind = match.group("kind").lower()
    tool = match.group("tool")
    glob = match.group("glob")
    glob = (_unquote(glob) or None) if glob is not None else None
    if kind in ("text", "thinking"):
        if tool is not None or glob is not None:
            return None
        return ScopeToken(kind)  # type: ignore[arg-type]  # narrowed by the test above
    if kind in ("tool", "toolcall"):
        if tool is not None and not tool:
            return None
        return ScopeToken("tool", tool.lower() if tool else None, glob)
    if tool is not None:
        return None  # "foo:bar" names no stream
    return ScopeToken("tool", kind, glob)


def _string_list(value: Any, key: str, warnings: list[str], *, comma_split: bool) -> list[str]:
    """A string or list value as strings; non-strings are stringified, nested data warned."""
    if value is None:
        return []
    if isinstance(value, str):
        return split_top_level(value) if comma_split else ([value.strip()] if value.strip() else [])
    if isinstance(value, (bool, dict)):
        warnings.append(f"{key}: expected a string or a list, got {value!r} (ignored)")
        return []
    if isinstance(value, int | float):
        return [str(value)]
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if item is None:
                continue
            if isinstance(item, list | dict | bool):
                warnings.append(f"{key}: cannot use item {item!r} (skipped)")
                continue
            text = str(item).strip()
            if text:
                out.append(text)
        return out
    warnings.append(f"{key}: cannot use {value!r} (ignored)")
    return []


def _bool_value(value: Any, key: str, warnings: list[str]) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "false", "no", "off"):
        return value.strip().lower() in ("true", "yes", "on")
    warnings.append(f"{key}: expected true or false, got {value!r} (taken as false)")
    return False


def parse_rule_text(text: str, name: str, path: Path | None, source: str, priority: int) -> Rule:
    """Build a :class:`Rule` from a rule file's text; never raises.

    Every problem (unreadable front matter, a bad scope token, an invalid regex) is recorded in
    ``rule.warnings`` and the rule keeps what could be read, so ``--list-rules`` can say what
    went wrong instead of the rule silently vanishing.
    """
    front = parse_front_matter(text)
    data = front.data
    warnings = list(front.warnings)

    condition_key = next((key for key in CONDITION_KEYS if key in data), None)
    raw_conditions = (
        _string_list(data[condition_key], condition_key, warnings, comma_split=False) if condition_key else []
    )
    for other in CONDITION_KEYS:
        if other != condition_key and other in data:
            warnings.append(f"{other}: ignored, {condition_key!r} is used")

    conditions: list[str] = []
    glob_scopes: list[ScopeToken] = []
    for token in raw_conditions:
        if looks_like_file_glob(token):
            for tool in ("edit", "write"):
                scope = ScopeToken("tool", tool, token)
                if scope not in glob_scopes:
                    glob_scopes.append(scope)
            continue
        if any(char in token for char in "\b\f\v\a"):
            warnings.append(
                f"condition {token!r} has a control character: in double quotes YAML reads "
                "'\\b' as a backspace; write regexes in single quotes"
            )
        try:
            regex.compile(token)
        except (regex.error, ValueError, OverflowError) as error:
            warnings.append(f"condition {token!r} is not a valid regex: {error}")
        conditions.append(token)
    if glob_scopes and not conditions:
        conditions = [".*"]

    scopes, scope_warnings = parse_scope(data.get("scope"))
    warnings.extend(scope_warnings)
    if glob_scopes:
        merged = list(scopes or ())
        merged.extend(scope for scope in glob_scopes if scope not in merged)
        scopes = tuple(merged)

    globs = _string_list(data.get("globs"), "globs", warnings, comma_split=True)

    interrupt_mode: InterruptMode | None = None
    raw_mode = data.get("interruptMode", data.get("interrupt_mode"))
    if raw_mode is not None:
        mode = str(raw_mode).strip().lower()
        if mode in _INTERRUPT_MODES:
            interrupt_mode = mode  # type: ignore[assignment]  # checked against the literals
        else:
            warnings.append(
                f"interruptMode: {raw_mode!r} is not one of {', '.join(_INTERRUPT_MODES)} (ignored)"
            )

    always_apply = _bool_value(data.get("alwaysApply", data.get("always_apply")), "alwaysApply", warnings)

    description: str | None = None
    raw_description = data.get("description")
    if isinstance(raw_description, str | int | float) and not isinstance(raw_description, bool):
        description = " ".join(str(raw_description).split()) or None
    elif raw_description is not None:
        warnings.append(f"description: expected text, got {raw_description!r} (ignored)")

    return Rule(
        name=name,
        content=front.body.strip(),
        path=path,
        source=source,
        priority=priority,
        conditions=conditions,
        scopes=scopes,
        globs=globs,
        interrupt_mode=interrupt_mode,
        always_apply=always_apply,
        description=description,
        front_matter=data,
        warnings=warnings,
    )


# ---------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class DiscoveryReport:
    """What :func:`discover_rules` saw besides the rules: problems and shadowed duplicates."""

    warnings: list[str] = field(default_factory=list)
    shadowed: list[tuple[Rule, Rule]] = field(default_factory=list)
    """(the rule that lost, the rule of the same name that won)."""


@dataclass(frozen=True, slots=True)
class _Location:
    priority: int
    source: str
    path: Path
    kind: str
    """``dir`` (flat folder of rule files), ``clinerules`` (file or folder), ``instructions``."""
    suffixes: tuple[str, ...] = _RULE_SUFFIXES


def _project_dirs(cwd: Path) -> list[Path]:
    """``cwd`` and its parents up to the repository root (first with ``.git``) or ``/``."""
    dirs: list[Path] = []
    current = cwd
    while True:
        dirs.append(current)
        if (current / ".git").exists() or current.parent == current:
            return dirs
        current = current.parent


def _home() -> Path | None:
    """The home folder, or None where it cannot be determined (no HOME, unknown user)."""
    try:
        return Path.home()
    except (RuntimeError, KeyError, OSError):
        return None


def _agent_dir() -> Path | None:
    try:
        return agent_dir()
    except (RuntimeError, KeyError, OSError):
        return None


def _locations(cwd: Path) -> list[_Location]:
    """Every place rules are looked for, in the order that decides who wins a name."""
    home = _home()
    agent = _agent_dir()
    walk = _project_dirs(cwd)
    locations: list[_Location] = []
    locations += [_Location(100, ".agent/rules", d / ".agent" / "rules", "dir") for d in walk]
    if agent is not None:
        locations.append(_Location(100, "agent-dir/rules", agent / "rules", "dir"))
    locations += [_Location(70, ".agents/rules", d / ".agents" / "rules", "dir") for d in walk]
    if home is not None:
        locations.append(_Location(70, "~/.agents/rules", home / ".agents" / "rules", "dir"))
    locations += [_Location(60, ".omp/rules", d / ".omp" / "rules", "dir") for d in walk]
    if home is not None:
        locations.append(_Location(60, "~/.omp/agent/rules", home / ".omp" / "agent" / "rules", "dir"))
    for d in walk:
        locations.append(_Location(50, ".cursor/rules", d / ".cursor" / "rules", "dir", (".mdc", ".md")))
        locations.append(_Location(50, ".windsurf/rules", d / ".windsurf" / "rules", "dir", (".md",)))
    if home is not None:
        locations.append(_Location(50, "~/.cursor/rules", home / ".cursor" / "rules", "dir", (".mdc", ".md")))
    locations += [_Location(40, ".clinerules", d / ".clinerules", "clinerules", (".md",)) for d in walk]
    locations += [
        _Location(30, ".github/instructions", d / ".github" / "instructions", "instructions") for d in walk
    ]
    return locations


def _rule_files(location: _Location, report: DiscoveryReport) -> Iterator[tuple[str, Path]]:
    """(rule name, file) pairs of one location, in a stable order; unreadable folders warned."""
    path = location.path
    try:
        if location.kind == "clinerules" and path.is_file():
            yield "clinerules", path
            return
        if not path.is_dir():
            return
        if location.kind == "instructions":
            files = sorted(path.rglob(f"*{_INSTRUCTIONS_SUFFIX}"), key=lambda p: p.relative_to(path).parts)
            for file in files:
                if file.is_file():
                    yield file.name[: -len(_INSTRUCTIONS_SUFFIX)], file
            return
        entries = sorted(path.iterdir(), key=lambda p: p.name)
    except OSError as error:
        _warn(report, f"cannot read {path}: {error}")
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.suffix not in location.suffixes:
            continue
        try:
            if entry.is_file():
                yield entry.stem, entry
        except OSError as error:  # pragma: no cover - stat failing after iterdir is rare
            _warn(report, f"cannot read {entry}: {error}")


def _warn(report: DiscoveryReport, message: str) -> None:
    report.warnings.append(message)
    logger.warning("ttsr rules: %s", message)


def _read(path: Path, report: DiscoveryReport) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        _warn(report, f"cannot read {path}: {error}")
        return None


def load_builtin_rules(report: DiscoveryReport | None = None) -> list[Rule]:
    """The rules shipped in ``pi_tui/ttsr/builtin_rules/`` (priority 1, ``builtin=True``)."""
    report = report if report is not None else DiscoveryReport()
    rules: list[Rule] = []
    try:
        folder = resources.files("pi_tui.ttsr").joinpath("builtin_rules")
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
    except (OSError, ModuleNotFoundError) as error:
        _warn(report, f"cannot list the built-in rules: {error}")
        return rules
    for entry in entries:
        if not entry.name.endswith(".md") or not entry.is_file():
            continue
        try:
            text = entry.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            _warn(report, f"cannot read built-in rule {entry.name}: {error}")
            continue
        path = entry if isinstance(entry, Path) else None
        rule = parse_rule_text(text, entry.name[: -len(".md")], path, "builtin", 1)
        rule.builtin = True
        rules.append(rule)
    return rules


def discover_rules(
    cwd: str | Path,
    settings: TtsrSettings | None = None,
    *,
    report: DiscoveryReport | None = None,
) -> list[Rule]:
    """All rules visible from ``cwd``, one per name, highest priority first; never raises.

    ``settings`` is accepted for the caller's convenience but filters nothing: disabled and
    built-in rules are dropped by :func:`bucket_rules`, so ``--list-rules`` can still show them
    with the reason. Pass a :class:`DiscoveryReport` to receive read problems and the rules
    shadowed by a same-named rule of higher priority (they are also logged).
    """
    del settings  # see the docstring: bucketing applies the settings
    report = report if report is not None else DiscoveryReport()
    root = Path(os.path.abspath(cwd))
    winners: dict[str, Rule] = {}
    ordered: list[Rule] = []
    seen_paths: set[str] = set()

    def accept(rule: Rule) -> None:
        winner = winners.get(rule.name)
        if winner is not None:
            report.shadowed.append((rule, winner))
            return
        winners[rule.name] = rule
        ordered.append(rule)

    for location in _locations(root):
        for name, file in _rule_files(location, report):
            key = os.path.realpath(file)
            if key in seen_paths:  # e.g. ~/.agent/rules reached both walking up and as agent dir
                continue
            seen_paths.add(key)
            text = _read(file, report)
            if text is None:
                continue
            try:
                rule = parse_rule_text(text, name, file, location.source, location.priority)
            except Exception as error:  # pragma: no cover - parse_rule_text is meant never to raise
                _warn(report, f"cannot parse {file}: {error}")
                continue
            if location.kind == "instructions" and not rule.globs:
                rule.globs = _string_list(
                    rule.front_matter.get("applyTo"), "applyTo", rule.warnings, comma_split=True
                )
            accept(rule)
    for rule in load_builtin_rules(report):
        accept(rule)
    return ordered


# ---------------------------------------------------------------------------------------------
# Buckets
# ---------------------------------------------------------------------------------------------


class RuleRegistry(Protocol):
    """What :func:`bucket_rules` needs from the TTSR manager."""

    def add_rule(self, rule: Rule) -> str | None:
        """Register ``rule``; None when registered, else why it was refused."""
        ...


NO_USE_REASON = "no condition, alwaysApply or description"


def bucket_rules(rules: Iterable[Rule], manager: RuleRegistry, settings: TtsrSettings) -> list[BucketedRule]:
    """Decide what each rule becomes, registering TTSR rules with ``manager`` on the way.

    Order (specs/ttsr.md, buckets): disabled by name, disabled built-in, TTSR (when the manager
    accepts it), always-apply, rulebook, dropped. A rule the manager refuses (bad regex,
    unreachable scope) still falls through to always-apply or rulebook and keeps the refusal
    as its reason, so an author sees why their TTSR rule became a prompt rule.
    """
    disabled = set(settings.disabled_rules)
    bucketed: list[BucketedRule] = []
    for rule in rules:
        if rule.name in disabled:
            bucketed.append(BucketedRule(rule, "dropped", "disabled in settings"))
            continue
        if rule.builtin and not settings.builtin_rules:
            bucketed.append(BucketedRule(rule, "dropped", "built-in rules are disabled in settings"))
            continue
        reason = ""
        if rule.conditions:
            if not settings.enabled:
                reason = "ttsr disabled"
            else:
                try:
                    refusal = manager.add_rule(rule)
                except Exception as error:  # a manager bug must not stop the session from starting
                    logger.warning("ttsr rules: registering %s failed: %s", rule.name, error)
                    refusal = f"registration failed: {error}"
                if refusal is None:
                    bucketed.append(BucketedRule(rule, "ttsr"))
                    continue
                reason = refusal
        if rule.always_apply:
            bucketed.append(BucketedRule(rule, "always-apply", reason))
        elif rule.description:
            bucketed.append(BucketedRule(rule, "rulebook", reason))
        else:
            bucketed.append(BucketedRule(rule, "dropped", reason or NO_USE_REASON))
    return bucketed


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

RULEBOOK_HEADER = (
    "# Rulebook\n"
    "These project rules apply only to some tasks. When your task fits a rule's description, "
    "read the rule's file with the read tool before you act, and follow it."
)


def system_prompt_sections(bucketed: Iterable[BucketedRule]) -> list[str]:
    """System-prompt text for the non-TTSR rules: each always-apply rule's content, then one
    rulebook section listing the on-demand rules (the model reads a file only when relevant,
    which keeps long rule sets out of every request)."""
    sections: list[str] = []
    rulebook: list[str] = []
    for item in bucketed:
        rule = item.rule
        if item.bucket == "always-apply" and rule.content:
            sections.append(rule.content)
        elif item.bucket == "rulebook":
            line = f"- {rule.name}: {rule.description}"
            if rule.path is not None:
                line += f" ({rule.path})"
            elif rule.content:  # no file to read (a zipped package): give the text itself
                line += "\n" + "\n".join("  " + text for text in rule.content.splitlines())
            rulebook.append(line)
    if rulebook:
        sections.append(RULEBOOK_HEADER + "\n\n" + "\n".join(rulebook))
    return sections


def display_path(path: str | Path | None, cwd: str | Path) -> str:
    """``path`` relative to ``cwd`` when inside it, else ``~/...`` under home, else absolute.

    The same form the interrupt templates use for ``{{path}}``: short, and still findable.
    """
    if path is None:
        return "(no file)"
    absolute = Path(os.path.abspath(path))
    base = Path(os.path.abspath(cwd))
    if absolute.is_relative_to(base) and absolute != base:
        return absolute.relative_to(base).as_posix()
    home_dir = _home()
    home = Path(os.path.abspath(home_dir)) if home_dir is not None else None
    if home is not None and absolute.is_relative_to(home) and absolute != home:
        return "~/" + absolute.relative_to(home).as_posix()
    return str(absolute)


def format_rule_list(
    bucketed: Sequence[BucketedRule], cwd: str | Path, report: DiscoveryReport | None = None
) -> str:
    """The ``--list-rules`` / ``/rules`` text: one aligned line per rule (name, bucket, source,
    file), the drop reason or manager refusal and the rule's warnings indented below it; with
    a ``report``, shadowed duplicates and read problems follow."""
    if not bucketed and not (report and (report.shadowed or report.warnings)):
        return "No rules found."
    rows = [
        (item.rule.name, item.bucket, item.rule.source, display_path(item.rule.path, cwd))
        for item in bucketed
    ]
    widths = [max((len(row[column]) for row in rows), default=0) for column in range(3)]
    lines: list[str] = []
    for item, row in zip(bucketed, rows, strict=True):
        cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
        lines.append("  ".join([*cells, row[3]]))
        if item.reason:
            label = "dropped" if item.bucket == "dropped" else "not a TTSR rule"
            lines.append(f"    {label}: {item.reason}")
        lines.extend(f"    warning: {warning}" for warning in item.rule.warnings)
    if report is not None:
        for loser, winner in report.shadowed:
            lines.append(
                f"{loser.name} ({loser.source}, {display_path(loser.path, cwd)}) shadowed by "
                f"{winner.source}, {display_path(winner.path, cwd)}"
            )
        lines.extend(f"warning: {warning}" for warning in report.warnings)
    return "\n".join(line.rstrip() for line in lines)
