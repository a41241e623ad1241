"""YAML front matter of Markdown resources: rule files, skills and prompt templates.

The block between a leading ``---`` and the next ``---`` (or ``...``) line is read with PyYAML,
as pi reads it with the ``yaml`` package. Two choices keep the result what pi and the files'
authors mean:

- The YAML 1.2 core schema, not PyYAML's YAML 1.1 default: ``on``/``off``/``yes``/``no`` stay
  strings (a key named ``on`` is not ``True``), ``012`` is twelve, and dates stay text.
- A lenient fallback for front matter a YAML parser refuses but these files commonly hold (and
  pi-tui always accepted): Cursor's ``globs: *.ts,*.tsx`` (an alias to YAML), regexes with
  ``\\d`` in double quotes, tabs in indentation, a stray line that is not ``key: value``. The
  block is then read one top-level key at a time; a key YAML cannot read keeps its text, with a
  warning, so a single bad line never loses the whole front matter.

Nothing here raises: problems become :attr:`FrontMatter.warnings` (with the file's line number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["FrontMatter", "parse_front_matter"]


@dataclass(slots=True)
class FrontMatter:
    """A Markdown file split into its front matter (as data) and its body."""

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
            data, warnings = _read_block(lines[1:index], first_line=2)
            return FrontMatter(data, "\n".join(lines[index + 1 :]), warnings, present=True)
    return FrontMatter({}, text, ["front matter: no closing '---' line; read the file as plain content"])


# ---------------------------------------------------------------------------------------------
# PyYAML with the YAML 1.2 core schema
# ---------------------------------------------------------------------------------------------


def _construct_int(loader: yaml.BaseLoader, node: yaml.Node) -> int:
    value = str(node.value)
    sign = -1 if value.startswith("-") else 1
    digits = value.lstrip("+-")
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    return sign * int(digits, 10)


def _construct_float(loader: yaml.BaseLoader, node: yaml.Node) -> float:
    value = str(node.value).lower()
    if value.endswith(".nan"):
        return float("nan")
    if value.endswith(".inf"):
        return float("-inf") if value.startswith("-") else float("inf")
    return float(value)


_IMPLICIT_TYPES = (
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
)


def _core_loader() -> type[yaml.SafeLoader]:
    """A SafeLoader whose implicit types are YAML 1.2 core's (null, bool, int, float, nothing
    else), on libyaml's parser where PyYAML has it (about five times faster than pure Python)."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader: type[yaml.SafeLoader] = type("CoreLoader", (base,), {"yaml_implicit_resolvers": {}})
    for name, pattern, first in _IMPLICIT_TYPES:
        loader.add_implicit_resolver(f"tag:yaml.org,2002:{name}", re.compile(pattern), first)
    loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
    return loader


_CoreLoader = _core_loader()

_MAX_NODES = 10_000
"""Aliases can make a small block stand for a huge tree; past this many values it is refused."""


class _TooLarge(Exception):
    pass


def _plain(value: Any, budget: list[int]) -> Any:
    """A loaded value with string keys throughout (what a JSON-minded reader expects)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if isinstance(value, dict):
        return {_key_text(key): _plain(item, budget) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, budget) for item in value]
    return value


def _key_text(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


def _load(source: str) -> Any:
    """Load one YAML document; raises :class:`yaml.YAMLError` (or ``_TooLarge``) when it cannot."""
    loaded = yaml.load(source, Loader=_CoreLoader)  # a SafeLoader subclass
    return _plain(loaded, [_MAX_NODES])


def _problem(error: Exception) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        return error.problem
    if isinstance(error, _TooLarge):
        return "too many values"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _read_block(lines: list[str], first_line: int) -> tuple[dict[str, Any], list[str]]:
    """The front matter block as a mapping; lenient (key by key) when YAML refuses the whole."""
    try:
        loaded = _load("\n".join(lines))
    except (_TooLarge, RecursionError):
        return {}, [f"front matter line {first_line}: too many or too deeply nested values; ignored"]
    except (yaml.YAMLError, ValueError):
        return _lenient(lines, first_line)
    if loaded is None:
        return {}, []
    if not isinstance(loaded, dict):
        return {}, [f"front matter line {first_line}: front matter is not a mapping of keys; ignored"]
    return loaded, []


# ---------------------------------------------------------------------------------------------
# The lenient reading
# ---------------------------------------------------------------------------------------------

_YAML_ESCAPES = frozenset('0abt\tnvfre "/\\N_LP')
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")
_KEY = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s#'"][^:]*?)\s*:(?:\s|$)""")


def _entries(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Top-level entries: a line at the left margin starts one; deeper lines continue it.

    A ``- item`` or a closing bracket back at the margin still belongs to the entry above
    (``key:`` then an unindented list, a flow list whose ``]`` sits under its key).
    """
    entries: list[tuple[int, list[str]]] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        at_margin = bool(stripped) and line[0] not in " \t" and not stripped.startswith("#")
        continues = stripped.startswith(("- ", "]", "}")) or stripped == "-"
        if at_margin and not (continues and entries):
            entries.append((index, [line]))
        elif entries:
            entries[-1][1].append(line)
    return entries


def _untab(line: str) -> str:
    """Tabs in the indentation as two spaces each (YAML forbids tabs there; authors use them)."""
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)].replace("\t", "  ") + body


def _repair_escapes(text: str) -> tuple[str, list[str]]:
    """Double the backslash of escapes YAML does not know inside double quotes (``"\\d+"``).

    Such a backslash is a regex author's, not YAML's; kept as written it means what they meant.
    """
    out: list[str] = []
    unknown: list[str] = []
    in_double = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            in_double = not in_double
        elif in_double and char == "\\" and i + 1 < len(text):
            code = text[i + 1]
            width = _HEX_ESCAPES.get(code)
            digits = text[i + 2 : i + 2 + width] if width else ""
            hex_ok = width is not None and len(digits) == width and all(c in _HEX for c in digits)
            known = code in _YAML_ESCAPES or hex_ok
            out.append(text[i : i + 2] if known else "\\\\" + code)
            if not known:
                unknown.append(code)
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out), unknown


def _strip_comment(value: str) -> str:
    """Drop a trailing ``  # comment`` from a plain (unquoted) value."""
    for index, char in enumerate(value):
        if char == "#" and index > 0 and value[index - 1] in " \t":
            return value[:index].rstrip()
    return value


def _lenient(lines: list[str], first_line: int) -> tuple[dict[str, Any], list[str]]:
    data: dict[str, Any] = {}
    warnings: list[str] = []
    for start, chunk in _entries(lines):
        where = f"front matter line {first_line + start}"
        chunk = [_untab(line) for line in chunk]
        head = chunk[0].strip()
        match = _KEY.match(head)
        if head.startswith("- ") or match is None:
            warnings.append(f"{where}: expected 'key: value', got {head!r} (skipped)")
            continue
        source = "\n".join(chunk)
        try:
            loaded = _load(source)
        except (yaml.YAMLError, _TooLarge, RecursionError, ValueError) as error:
            repaired, unknown = _repair_escapes(source)
            try:
                loaded = _load(repaired) if unknown else None
            except (yaml.YAMLError, _TooLarge, RecursionError, ValueError):
                loaded = None
            if isinstance(loaded, dict):
                hint = "is not a YAML escape; kept as written (use single quotes for regexes)"
                warnings.extend(f"{where}: '\\{code}' {hint}" for code in unknown)
                data.update(loaded)
                continue
            key = match.group(0).rstrip().removesuffix(":").strip().strip("\"'")
            pieces = [head[match.end() :].strip(), *(line.strip() for line in chunk[1:])]
            value = " ".join(piece for piece in pieces if piece)
            data[key] = _as_text(value, key, where, _problem(error), warnings)
            continue
        if isinstance(loaded, dict):
            data.update(loaded)
        else:
            warnings.append(f"{where}: expected 'key: value', got {head!r} (skipped)")
    return data, warnings


def _as_text(value: str, key: str, where: str, problem: str, warnings: list[str]) -> str:
    """A value YAML could not read, kept as the text its author wrote.

    A plain value (``globs: *.ts,*.tsx``, ``description: Use it: when ...``) is what every
    Markdown front-matter reader takes as text, as pi-tui always did: no warning. A quoted or
    bracketed one that does not parse is a real mistake and is named.
    """
    opener = value[:1]
    if opener in ("[", "{") and value.count(opener) > value.count("]" if opener == "[" else "}"):
        warnings.append(f"{where}: unclosed {opener!r} in {value!r}; read as text")
        return value
    if opener in ("[", "{", '"', "'"):
        warnings.append(f"{where}: {key!r} is not valid YAML ({problem}); read as text")
    return _strip_comment(value)
