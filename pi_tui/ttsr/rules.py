"""TTSR rule files: parsing, discovery, bucketing, and how rules show up in prompts and listings.

Rule files are Markdown with YAML front matter, written for pi, oh-my-pi, Cursor, Windsurf,
Cline or Copilot (specs/ttsr.md, "Rule files" and "Discovery"). Nothing here may stop a session
from starting: a bad file, key or token becomes a warning (on the rule, in a
:class:`DiscoveryReport`, and on this module's logger) and everything readable is kept.

The front matter is read by :mod:`pi_tui.resources.front_matter` (PyYAML, with a lenient
fallback for the common not-quite-YAML of rule files: ``globs: *.ts,*.tsx``, regexes with
``\\d`` in double quotes).

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
from pi_tui.resources.front_matter import parse_front_matter
from pi_tui.ttsr.model import BucketedRule, InterruptMode, Rule, ScopeToken

__all__ = [
    "CONDITION_KEYS",
    "DiscoveryReport",
    "RuleRegistry",
    "bucket_rules",
    "discover_rules",
    "display_path",
    "format_rule_list",
    "load_builtin_rules",
    "looks_like_file_glob",
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
# Rules
# ---------------------------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


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
        return ScopeToken(kind)
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
            interrupt_mode = mode
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
