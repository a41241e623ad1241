"""The TTSR matcher: which registered rules does a streamed delta violate?

:class:`TtsrManager` keeps one buffer per stream (answer text, thinking, each tool call's
arguments) and, for every delta, returns the rules that pass their repeat policy, their scope,
their ``globs`` gate and whose condition matches text that just arrived (specs/ttsr.md, "The
manager"; seeds/ttsr-injection-lifecycle.md, sections 1, 2, 5 and 9).

Cost is the point of this module. A reply arrives in thousands of small deltas while every rule
watches it: re-searching the whole buffer on each delta (omp's approach) is quadratic, and even
re-searching a fixed 64 KiB look-back window costs thousands of times the size of a 10-character
delta. Three things keep a delta's cost close to the size of the delta:

* **Resume positions from partial matching.** Conditions run on the ``regex`` package with
  ``partial=True``: a search reports the leftmost *complete* match or, when there is none, the
  leftmost *partial* match (an attempt that ran into the end of the buffer and could complete
  with more text). Without a complete match no position left of that partial match can ever
  start a match, whatever arrives later, so the condition's next search starts there; for most
  patterns that is within a few characters of the end of the buffer.
* **Required literals.** Most conditions contain a literal that every match must contain
  (``datetime.utcnow()``, ``except``, one of ``password|secret|api``...), read from the stdlib
  parser's tree at registration. Such a condition is searched only while one of its literals
  has been seen at or after its resume position; on every other delta a single search of the
  new text (plus the few characters a literal can straddle) for all literals at once proves
  it cannot match. When the distance between a match's start and its literal is bounded, a
  woken condition also skips straight to that distance before the literal. Conditions without
  a usable literal are searched on every delta, still from their resume position.
* **A cached eligibility answer** per (source, tool, file paths), invalidated whenever the
  repeat state or the rule set changes, so the per-rule checks do not run on every delta.

Searches get the whole buffer with ``pos``/``endpos`` so look-behind, ``\\b`` and anchors see the
real text; the look-back stays bounded (``window``, default 64 KiB before the new text). A match
counts when it ends in text this condition has not been checked against (so an old match does
not fire again on later deltas) and starts where no complete match was seen before (a greedy
match growing at the same start, ``c.*a`` over ``ca`` then ``caa``, is the same occurrence).
Every search runs with the ``regex`` timeout: a pattern that exceeds it is disabled with a
warning instead of freezing the interface.
"""

from __future__ import annotations

import importlib
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from pi_tui.config.settings import TtsrSettings
from pi_tui.ttsr.globs import glob_matches
from pi_tui.ttsr.model import MatchContext, Rule, ScopeToken, Source

try:  # The stdlib regex parser finds required literals; without it every condition is searched.
    # Private modules with no type stubs: imported by name, they are typed as what they are.
    _sre: Any = importlib.import_module("re._constants")
    _sre_parser: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - a Python without the private modules
    _sre = _sre_parser = None

__all__ = ["TtsrManager"]

_SOURCES: frozenset[str] = frozenset(("text", "thinking", "tool"))

_REGEX_ONLY_SYNTAX = regex.compile(r"\[:\^?[a-zA-Z]+:\]|(?<!\\)\{\s*[a-z]")
"""``regex`` syntax that the stdlib parser would read as literals: POSIX classes
(``[[:alpha:]]``) and fuzzy constraints (``{e<=1}``). Such conditions get no required literal."""


_LITERAL_MAX = 24
"""Longest literal kept (its prefix): bounds the text re-read before each delta."""


@dataclass(slots=True, eq=False)
class _Condition:
    """One compiled condition of a registered rule."""

    index: int
    """Unique and increasing in registration order: the key for per-stream state."""
    owner: _Registered
    source: str
    pattern: regex.Pattern[str]
    literals: tuple[str, ...] | None
    """Case-folded strings of which every match contains one; None: search on every delta."""
    lead: int | None = None
    """How far after a match's start its literal can begin (None: no bound)."""
    active: bool = True


@dataclass(slots=True, eq=False)
class _Registered:
    rule: Rule
    order: int
    conditions: list[_Condition] = field(default_factory=list)
    scopes: tuple[ScopeToken, ...] = ()
    globs: tuple[str, ...] = ()
    disabled: str | None = None
    """Why the rule stopped matching at run time (all its conditions timed out)."""


@dataclass(slots=True)
class _CondState:
    """How far one condition has been checked in one stream."""

    resume: int = 0
    """No new match of this condition can start before this position."""
    checked: int = 0
    """Buffer length when the condition was last searched: matches ending after it are new."""
    fired_last: bool = False
    """Whether that search reported a match. If not, a match ending exactly at ``checked`` was
    incomplete then (waiting on a look-ahead) and is new now."""
    literal_seen: int = -1
    """Buffer length when one of the condition's literals was last seen: while ``resume`` is
    not past it, the condition must be searched."""


@dataclass(slots=True, eq=False)
class _Group:
    """The conditions eligible in one stream, split by how they are watched."""

    key: tuple[int, ...]
    always: tuple[_Condition, ...]
    """Conditions without a required literal: searched on every delta."""
    watched: tuple[_Condition, ...]
    """Conditions searched only after one of their literals shows up."""
    literals: tuple[str, ...]
    """Every literal of ``watched`` (case-folded, no duplicates)."""
    by_literal: dict[str, tuple[_Condition, ...]]
    """The watched conditions each literal wakes up."""
    trigger: re.Pattern[str]
    """Finds any of ``literals`` (a trie, so the stdlib engine rejects most positions on their
    first character): one search per delta instead of one substring test per literal."""
    reach: int
    """Longest literal minus one: how far before the new text a literal may begin."""


@dataclass(slots=True, eq=False)
class _Stream:
    text: str = ""
    states: dict[int, _CondState] = field(default_factory=dict)
    pending: dict[int, _Condition] = field(default_factory=dict)
    """Watched conditions whose literal was seen and whose resume has not passed it."""
    group: _Group | None = None
    eligible: tuple[_Condition, ...] | None = None
    """The eligibility answer ``group`` was made for (the cache hands out the same tuple)."""


class TtsrManager:
    """Registered TTSR rules, per-stream buffers and the repeat state of one session.

    ``timeout`` bounds every single regex search (seconds); ``window`` is how far before the
    new text a match may start (characters).
    """

    def __init__(
        self,
        settings: TtsrSettings,
        cwd: Path,
        *,
        timeout: float = 0.05,
        window: int = 64 * 1024,
    ) -> None:
        self.settings = settings
        self.cwd = Path(cwd)
        self._cwd = os.path.normpath(os.path.abspath(cwd))
        self.timeout = timeout
        self.window = window
        self.warnings: list[str] = []
        """Problems found while registering or matching (invalid conditions, timeouts)."""
        self._registered: list[_Registered] = []
        self._by_name: dict[str, _Registered] = {}
        self._next_condition = 0
        self._streams: dict[str, _Stream] = {}
        self._turns_completed = 0
        self._injected: dict[str, int] = {}
        """Rule name -> completed-turn count when it was (last) injected on this branch."""
        self._eligible_cache: dict[tuple[Any, ...], tuple[_Condition, ...]] = {}
        self._groups: dict[tuple[int, ...], _Group] = {}

    # --- registration --------------------------------------------------------------------------

    def add_rule(self, rule: Rule) -> str | None:
        """Register ``rule``; None when registered, else why it was refused (nothing kept).

        Invalid individual conditions are dropped with a warning in :attr:`warnings` while the
        valid ones are kept: one typo should not silence a whole rule. A refusal for a broken
        rule (no valid condition, unreachable scope) is also logged there; a refusal that is a
        setting or a shadowed duplicate is not a problem with the rule and is not.
        """
        if not self.settings.enabled:
            return "ttsr disabled"
        if rule.name in self._by_name:
            return f"a rule named {rule.name!r} is already registered"
        if not rule.conditions:
            return "no condition"
        scopes = tuple(token for token in rule.effective_scopes if token.source in _SOURCES)
        if not scopes:
            reason = "scope reaches nothing (no text, thinking or tool stream)"
            self.warnings.append(f"ttsr rule {rule.name!r}: {reason}; not registered")
            return reason
        globs: list[str] = []
        for glob in rule.globs:
            try:
                glob_matches(glob, "")  # compiles and caches the glob
            except (ValueError, regex.error) as error:
                self.warnings.append(f"ttsr rule {rule.name!r}: invalid glob {glob!r} ignored: {error}")
            else:
                globs.append(glob)
        if rule.globs and not globs:
            reason = "no valid glob in globs (the gate could never pass)"
            self.warnings.append(f"ttsr rule {rule.name!r}: {reason}; not registered")
            return reason
        for token in scopes:
            if token.glob is not None:
                glob_matches(token.glob, "")

        registered = _Registered(rule, len(self._registered), scopes=scopes, globs=tuple(globs))
        errors: list[str] = []
        for source in rule.conditions:
            flags = regex.MULTILINE if ("^" in source or "$" in source) else 0
            try:
                pattern = regex.compile(source, flags)
            except (regex.error, ValueError, OverflowError) as error:
                errors.append(f"invalid condition {source!r}: {error}")
                continue
            required = _required_literals(source)
            literals, lead = required if required is not None else (None, None)
            registered.conditions.append(
                _Condition(self._next_condition, registered, source, pattern, literals, lead)
            )
            self._next_condition += 1
        if not registered.conditions:
            self.warnings.extend(f"ttsr rule {rule.name!r}: {error}; not registered" for error in errors)
            return "; ".join(errors)
        self.warnings.extend(f"ttsr rule {rule.name!r}: {error} (ignored)" for error in errors)
        self._registered.append(registered)
        self._by_name[rule.name] = registered
        self._invalidate()
        return None

    @property
    def rules(self) -> list[Rule]:
        """Registered rules in registration order (including any disabled at run time)."""
        return [registered.rule for registered in self._registered]

    def get(self, name: str) -> Rule | None:
        registered = self._by_name.get(name)
        return registered.rule if registered else None

    @property
    def disabled(self) -> dict[str, str]:
        """Rules that stopped matching at run time (every condition timed out) -> why."""
        return {r.rule.name: r.disabled for r in self._registered if r.disabled is not None}

    # --- turns and repeat state ----------------------------------------------------------------

    @property
    def turns_completed(self) -> int:
        return self._turns_completed

    def reset_buffers(self) -> None:
        """``turn_start``: every stream starts empty (a retry re-streams from scratch)."""
        self._streams.clear()

    def turn_completed(self) -> None:
        """``turn_end``: the repeat gap is measured in completed turns, not deltas."""
        self._turns_completed += 1
        self._invalidate()

    def mark_injected(self, names: Iterable[str]) -> None:
        """The rules were injected now (their repeat policy starts counting from here)."""
        for name in names:
            self._injected[name] = self._turns_completed
        self._invalidate()

    def restore_injected(self, names: Iterable[str]) -> None:
        """Rules injected earlier on the current branch (its ``ttsr_injection`` entries).

        The turn they were injected in is not recorded, so they count as injected at the
        current turn count: ``once`` rules stay silent, ``after-gap`` rules wait a full gap.
        """
        self.mark_injected(names)

    def is_injected(self, name: str) -> bool:
        return name in self._injected

    def clear_injected(self) -> None:
        """Forget the repeat state (switching branches; the new branch's entries follow)."""
        self._injected.clear()
        self._invalidate()

    def interrupts(self, rule: Rule, source: Source) -> bool:
        """Whether a match of ``rule`` in ``source`` cuts the stream (rule mode, else setting)."""
        mode = rule.interrupt_mode or self.settings.interrupt_mode
        if mode == "always":
            return True
        if mode == "prose-only":
            return source in ("text", "thinking")
        if mode == "tool-only":
            return source == "tool"
        return False

    # --- matching ------------------------------------------------------------------------------

    def check_delta(self, delta: str, context: MatchContext) -> list[Rule]:
        """Append ``delta`` to its stream and return the rules it makes match, in order.

        Never raises for a bad or slow pattern: a search that times out disables its condition
        (and the rule when none is left) with a warning.
        """
        if not delta or not self.settings.enabled:
            return []
        key = context.buffer_key
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream()
        # Grow the buffer in place: with the stream's reference dropped, CPython appends to a
        # uniquely referenced str without copying it, which keeps a long stream linear.
        text = stream.text
        stream.text = ""
        text += delta
        stream.text = text
        del text

        eligible = self._eligible(context)
        if not eligible:
            stream.group = stream.eligible = None  # nothing watched this delta: start over later
            return []
        group = stream.group
        if eligible is not stream.eligible:
            stream.eligible = eligible
            if group is None or group.key != tuple(c.index for c in eligible):
                group = stream.group = None
        if group is None:
            group = stream.group = self._group(eligible)
            self._start_watching(stream, group, len(delta))
        return self._search(stream, group, len(delta))

    def _start_watching(self, stream: _Stream, group: _Group, delta_length: int) -> None:
        """A new set of eligible conditions: find which ones have a literal to look at.

        Literals that went by while a condition was not eligible were not recorded, so the
        look-back window is read once: a condition whose literal occurs after its resume
        position is searched on this delta, the others wait for their literal as usual.
        """
        text = stream.text
        end = len(text)
        floor = max(0, end - delta_length - self.window)
        folded = text[floor:end].casefold() if group.watched else ""
        same_offsets = text.isascii()  # case folding keeps positions only for ASCII text
        stream.pending = {}
        for condition in group.always + group.watched:
            state = stream.states.get(condition.index)
            if state is None:
                state = stream.states[condition.index] = _CondState()
            if condition.literals is None:
                continue
            since = max(state.resume, floor) - floor if same_offsets else 0
            if any(folded.find(literal, since) >= 0 for literal in condition.literals):
                state.literal_seen = end
                stream.pending[condition.index] = condition

    def _search(self, stream: _Stream, group: _Group, delta_length: int) -> list[Rule]:
        text = stream.text
        end = len(text)
        old = end - delta_length
        pending = stream.pending
        if group.literals:
            region_start = max(0, old - group.reach)
            region = text[region_start:end].casefold()
            if group.trigger.search(region) is not None:
                states = stream.states
                for literal in group.literals:
                    if literal in region:
                        for condition in group.by_literal[literal]:
                            state = states[condition.index]
                            if condition.index not in pending and condition.lead is not None:
                                # Every earlier occurrence lies before ``resume``: a match must
                                # use one of these, so it starts at most ``lead`` before them.
                                state.resume = max(state.resume, region_start - condition.lead)
                            state.literal_seen = end
                            pending[condition.index] = condition
        floor = max(0, old - self.window)
        fired: list[_Condition] = []
        for condition in group.always:
            if condition.active and self._scan(condition, stream, floor):
                fired.append(condition)
        if pending:
            for index, condition in list(pending.items()):
                if condition.active and self._scan(condition, stream, floor):
                    fired.append(condition)
                state = stream.states[index]
                if not condition.active or state.resume >= state.literal_seen:
                    del pending[index]
        if not fired:
            return []
        owners = {condition.owner.order: condition.owner.rule for condition in fired}
        return [owners[order] for order in sorted(owners)]

    def _scan(self, condition: _Condition, stream: _Stream, floor: int) -> bool:
        """Search one condition for a match ending in text it has not been checked against.

        Also advances the condition's resume position past positions that can never start a
        new match: positions before the leftmost partial match, and positions whose complete
        match has been seen (a later match there is the same occurrence grown longer).
        """
        state = stream.states[condition.index]
        text = stream.text
        end = len(text)
        search = condition.pattern.search
        position = max(state.resume, floor)
        intact = True  # every position left of ``position`` is proven spent
        found = False
        try:
            while position <= end:
                match = search(text, position, end, partial=True, timeout=self.timeout)
                if match is None or match.partial:
                    if intact:
                        state.resume = end if match is None else match.start()
                    break
                start = match.start()
                if intact and start > position:
                    # The leftmost *complete* match hides partial matches before it: probe the
                    # gap with the text cut at ``start``. Anything reported there may still
                    # grow into a match, so the resume position must stay at or before it.
                    probe = search(text, position, start, partial=True, timeout=self.timeout)
                    if probe is not None and probe.start() < start:
                        intact = False
                        state.resume = probe.start()
                if intact:
                    state.resume = min(start + 1, end)
                if match.end() > state.checked or (match.end() == state.checked and not state.fired_last):
                    found = True
                    break
                position = start + 1
        except TimeoutError:
            self._disable(condition)
            found = False
        state.checked = end
        state.fired_last = found
        return found

    def _disable(self, condition: _Condition) -> None:
        condition.active = False
        owner = condition.owner
        message = (
            f"ttsr rule {owner.rule.name!r}: condition {condition.source!r} took longer than "
            f"{self.timeout:g}s and was disabled"
        )
        if not any(c.active for c in owner.conditions):
            owner.disabled = f"every condition timed out (last: {condition.source!r})"
            message += "; the rule has no condition left and is disabled"
        self.warnings.append(message)
        self._invalidate()

    def _group(self, eligible: tuple[_Condition, ...]) -> _Group:
        key = tuple(condition.index for condition in eligible)
        group = self._groups.get(key)
        if group is None:
            watched = tuple(c for c in eligible if c.literals is not None)
            literals = tuple(dict.fromkeys(lit for c in watched for lit in c.literals or ()))
            group = _Group(
                key,
                always=tuple(c for c in eligible if c.literals is None),
                watched=watched,
                literals=literals,
                by_literal={lit: tuple(c for c in watched if lit in (c.literals or ())) for lit in literals},
                trigger=re.compile(_trie_source(literals)),
                reach=max((len(lit) for lit in literals), default=1) - 1,
            )
            self._groups[key] = group
        return group

    # --- eligibility ---------------------------------------------------------------------------

    def _invalidate(self) -> None:
        """The rule set or repeat state changed: recompute eligibility on the next delta."""
        self._eligible_cache.clear()

    def _eligible(self, context: MatchContext) -> tuple[_Condition, ...]:
        """Active conditions of the rules that pass repeat policy, scope and ``globs`` gate."""
        if context.source == "tool":
            tool = (context.tool_name or "").lower()
            paths = _argument_paths(context.arguments)
        else:
            tool, paths = "", ()
        key = (context.source, tool, paths)
        cached = self._eligible_cache.get(key)
        if cached is not None:
            return cached
        candidates = self._candidates(paths)
        eligible: list[_Condition] = []
        for registered in self._registered:
            if registered.disabled is not None or not self._may_repeat(registered.rule.name):
                continue
            if not any(_scope_matches(t, context.source, tool, candidates) for t in registered.scopes):
                continue
            if registered.globs and not any(
                glob_matches(glob, path) for glob in registered.globs for path in candidates
            ):
                continue
            eligible.extend(c for c in registered.conditions if c.active)
        result = tuple(eligible)
        if len(self._eligible_cache) > 256:
            self._eligible_cache.clear()
        self._eligible_cache[key] = result
        return result

    def _may_repeat(self, name: str) -> bool:
        last = self._injected.get(name)
        if last is None:
            return True
        if self.settings.repeat_mode == "after-gap":
            return self._turns_completed - last >= self.settings.repeat_gap
        return False

    def _candidates(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Each path as written, without ``./``, absolute, and relative to cwd when inside it."""
        found: dict[str, None] = {}
        prefix = self._cwd.rstrip(os.sep) + os.sep
        for path in paths:
            found[path] = None
            stripped = path
            while stripped.startswith(("./", ".\\")):
                stripped = stripped[2:]
            found[stripped] = None
            absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(self._cwd, path))
            found[absolute] = None
            if absolute.startswith(prefix):
                found[absolute[len(prefix) :]] = None
        return tuple(found)


def _scope_matches(token: ScopeToken, source: str, tool: str, candidates: tuple[str, ...]) -> bool:
    if token.source != source:
        return False
    if source == "tool" and token.tool is not None and token.tool.lower() != tool:
        return False
    if token.glob is not None:
        return any(glob_matches(token.glob, path) for path in candidates)
    return True


def _argument_paths(arguments: Mapping[str, Any] | None) -> tuple[str, ...]:
    """File paths in (partial) tool arguments: ``*path`` strings and ``*paths`` lists."""
    if not arguments:
        return ()
    paths: list[str] = []
    for name, value in arguments.items():
        if not isinstance(name, str):
            continue
        lowered = name.lower()
        if isinstance(value, str) and lowered.endswith("path"):
            if value:
                paths.append(value)
        elif isinstance(value, list | tuple) and lowered.endswith("paths"):
            paths.extend(item for item in value if isinstance(item, str) and item)
    return tuple(paths)


# --- required literals -------------------------------------------------------------------------


Candidate = tuple[tuple[str, ...], int | None]
"""Strings of which every match contains one, and how far after the match start that string
can begin at most (None: unbounded)."""

_UNBOUNDED = 1 << 20


def _required_literals(source: str) -> Candidate | None:
    """Case-folded strings of which every match of ``source`` contains at least one.

    Read from the stdlib parser's tree (the ``regex`` package exposes none): runs of literal
    characters consumed at top level, inside groups and inside repeats of at least one, and an
    alternation when each branch has such a run. Only ever an under-statement of what a match
    needs, so a miss is impossible; None when nothing is found or the pattern uses syntax the
    stdlib reads differently. Longer literals win (fewer deltas wake the condition up), then
    one whose distance from the match start is bounded (a woken condition then needs to look
    back only that far).
    """
    if _sre_parser is None or _REGEX_ONLY_SYNTAX.search(source):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre_parser.parse(source, 0)
        best = _best_literals(_literal_candidates(list(parsed), parsed.state))
    except (re.error, RecursionError, OverflowError, ValueError, TypeError, IndexError, AttributeError):
        return None
    if best is None:
        return None
    literals, lead = best
    # A prefix of a required literal is required too; short ones keep the look-back small.
    return tuple(sorted({literal.casefold()[:_LITERAL_MAX] for literal in literals})), lead


def _trie_source(words: Iterable[str]) -> str:
    """A stdlib pattern matching any of ``words``, as a trie of escaped characters."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_node(trie) if trie else "(?!)"


def _trie_node(node: dict[str, Any]) -> str:
    if "" in node:
        return ""  # a word ends here: a longer word containing it needs no test of its own
    alternatives = [re.escape(char) + _trie_node(child) for char, child in sorted(node.items())]
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


def _literal_candidates(items: list[Any], state: Any) -> list[Candidate]:
    candidates: list[Candidate] = []
    run: list[str] = []
    run_start = 0
    for position, (op, argument) in enumerate(items):
        if op is _sre.LITERAL:
            if not run:
                run_start = position
            run.append(chr(argument))
            continue
        if run:
            candidates.append((("".join(run),), _max_width(items[:run_start], state)))
            run = []
        inner: list[Candidate] = []
        if op is _sre.SUBPATTERN:
            inner = _literal_candidates(list(argument[3]), state)
        elif op is _sre.ATOMIC_GROUP:
            inner = _literal_candidates(list(argument), state)
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            if argument[0] >= 1:  # the first repetition is in every match
                inner = _literal_candidates(list(argument[2]), state)
        elif op is _sre.BRANCH:
            branches = [_best_literals(_literal_candidates(list(b), state)) for b in argument[1]]
            if all(branches):
                literals = tuple(literal for branch in branches if branch for literal in branch[0])
                leads = [branch[1] for branch in branches if branch]
                inner = [(literals, None if None in leads else max(leads))]  # type: ignore[type-var]
        # Anything else (classes, anchors, look-arounds, back-references) consumes no known
        # literal or none inside the match: it only ends the current run.
        if inner:
            before = _max_width(items[:position], state)
            candidates.extend(
                (literals, None if before is None or lead is None else before + lead)
                for literals, lead in inner
            )
    if run:
        candidates.append((("".join(run),), _max_width(items[:run_start], state)))
    return candidates


def _max_width(items: list[Any], state: Any) -> int | None:
    """The most characters ``items`` can consume; None when unbounded (or huge)."""
    if not items:
        return 0
    high = _sre_parser.SubPattern(state, items).getwidth()[1]
    return high if high < _UNBOUNDED else None


def _best_literals(candidates: list[Candidate]) -> Candidate | None:
    usable = [candidate for candidate in candidates if candidate[0] and all(candidate[0])]
    if not usable:
        return None

    def quality(candidate: Candidate) -> tuple[int, bool, int, int]:
        shortest = min(map(len, candidate[0]))
        return min(shortest, 4), candidate[1] is not None, shortest, -len(candidate[0])

    return max(usable, key=quality)
