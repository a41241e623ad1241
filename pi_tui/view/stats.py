"""The figures in the footer, as pure functions so they can be tested without a terminal.

They follow pi's footer so the two programs show the same numbers for the same session:

- usage totals add up everything the session spent in the *whole* file, abandoned branches
  included (money spent on a branch you left is still spent), not just the current branch: the
  replies, and since pi 1.x also ``usage`` entries (e.g. cache warming), the ``usage`` of
  compaction and branch summary entries (writing the summary) and a tool result's ``usage``
  (a tool that called a model itself) -- :func:`add_raw_usage` is the one place that decides;
- zero totals are left out of the usage line, the cost has three decimals, and the context
  part is always present: ``?`` when the size is unknown (right after a compaction, until the
  model answers again), followed by `` (auto)`` when auto-compaction is on;
- numbers are rounded the way JavaScript's ``toFixed`` and ``Math.round`` round
  (:mod:`pi_tui.js_semantics`: halves up, on the exact binary value), not Python's half-to-even, so
  ``1250`` is ``1.3k`` in both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.js_semantics import math_round, number_to_string, to_fixed

CONTEXT_WARNING_PERCENT = 70.0
"""Above this share of the context window the footer shows the percentage as a warning."""
CONTEXT_ERROR_PERCENT = 90.0
"""Above this share it is shown as an error: compaction (or a new session) is due."""


@dataclass(slots=True)
class UsageTotals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0


def _usage_of(item: Any) -> Any:
    """The usage ``item`` adds to the session's totals (a message or a typed entry), or None."""
    kind = getattr(item, "type", None)
    if kind in ("usage", "compaction", "branch_summary"):
        return getattr(item, "usage", None)
    message = getattr(item, "message", None) if kind == "message" else item
    if getattr(message, "role", None) in ("assistant", "toolResult"):
        return getattr(message, "usage", None)
    return None


def usage_totals(messages: Iterable[Any]) -> UsageTotals:
    """Sum the usage of typed messages or session entries (the rules of :func:`add_raw_usage`).

    Session entries are accepted as well as bare messages, so callers can pass every entry of
    the session file (which is what pi sums) without unwrapping them first. Messages without
    usage (aborted before the provider reported any) count as zero.
    """
    totals = UsageTotals()
    for item in messages:
        usage = _usage_of(item)
        if usage is None:
            continue
        if isinstance(usage, Mapping):  # a field the message model keeps as it was (tool results)
            _add_usage_dict(totals, usage)
            continue
        totals.input += usage.input
        totals.output += usage.output
        totals.cache_read += usage.cache_read
        totals.cache_write += usage.cache_write
        cost = getattr(usage, "cost", None)
        if cost is not None:
            totals.cost += cost.total
    return totals


_SUMMARY_TYPES = frozenset({"usage", "compaction", "branch_summary"})
"""Entry types whose own ``usage`` field counts (pi 1.x)."""
_SPENDING_ROLES = frozenset({"assistant", "toolResult"})
"""Message roles whose ``usage`` counts: replies, and tool results of tools that ran a model."""


def add_raw_usage(totals: UsageTotals, entries: Iterable[Mapping[str, Any]]) -> UsageTotals:
    """Add what the raw session entries (the dicts of the file) spent to ``totals``.

    THE rule for the session's token and cost totals, used by the footer, ``/session``, the
    export header and rpc's ``get_session_stats``, so they cannot disagree with each other or
    with pi 1.x (its footer and ``getSessionStats``): a reply's usage, a tool result's usage, a
    ``usage`` entry's, and the usage of writing a compaction or branch summary. Reading the
    dicts avoids building a typed view of each entry of a long session after every reply; odd
    values (not numbers) count as zero.
    """
    for raw in entries:
        kind = raw.get("type")
        if kind == "message":
            message = raw.get("message")
            if not isinstance(message, dict) or message.get("role") not in _SPENDING_ROLES:
                continue
            usage = message.get("usage")
        elif kind in _SUMMARY_TYPES:
            usage = raw.get("usage")
        else:
            continue
        if isinstance(usage, dict):
            _add_usage_dict(totals, usage)
    return totals


def _add_usage_dict(totals: UsageTotals, usage: Mapping[str, Any]) -> None:
    totals.input += _count(usage.get("input"))
    totals.output += _count(usage.get("output"))
    totals.cache_read += _count(usage.get("cacheRead"))
    totals.cache_write += _count(usage.get("cacheWrite"))
    cost = usage.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)):
        totals.cost += float(cost["total"])


def session_usage(entries: Iterable[Mapping[str, Any]]) -> UsageTotals:
    """The totals of a whole session file's raw entries (see :func:`add_raw_usage`)."""
    return add_raw_usage(UsageTotals(), entries)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def format_tokens(n: int) -> str:
    """Compact token count: ``999``, ``1.2k``, ``12k``, ``1.2M``, ``12M`` (pi's steps)."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{to_fixed(n / 1000, 1)}k"
    if n < 1_000_000:
        return f"{number_to_string(math_round(n / 1000))}k"
    if n < 10_000_000:
        return f"{to_fixed(n / 1_000_000, 1)}M"
    return f"{number_to_string(math_round(n / 1_000_000))}M"


def footer_path_line(
    cwd: Path, branch: str | None, session_name: str | None, home: Path | None = None
) -> str:
    """``~/proj (main) • my session``: where we are, on which branch, in which named session."""
    home = Path.home() if home is None else home
    text = str(cwd)
    try:
        relative = cwd.relative_to(home)
    except ValueError:
        pass
    else:
        text = "~" if relative == Path(".") else f"~{os.sep}{relative}"
    if branch:
        text += f" ({branch})"
    if session_name:
        text += f" • {session_name}"
    return text


def context_percent(context_tokens: int | None, context_window: int) -> float | None:
    """Share of the window in use, None when the size is unknown; 0 without a known window."""
    if context_tokens is None:
        return None
    if context_window <= 0:
        return 0.0
    return context_tokens / context_window * 100


def context_level(context_tokens: int | None, context_window: int) -> str:
    """``"normal"``, ``"warning"`` or ``"error"``: how urgently the percentage should stand out."""
    percent = context_percent(context_tokens, context_window) or 0.0
    if percent > CONTEXT_ERROR_PERCENT:
        return "error"
    if percent > CONTEXT_WARNING_PERCENT:
        return "warning"
    return "normal"


def footer_usage_line(
    totals: UsageTotals, context_tokens: int | None, context_window: int, auto_compact: bool
) -> str:
    """``↑1.2k ↓340 R12k W1.1k $0.012 4.1%/200k (auto)``; zero figures are left out."""
    parts: list[str] = []
    if totals.input:
        parts.append(f"↑{format_tokens(totals.input)}")
    if totals.output:
        parts.append(f"↓{format_tokens(totals.output)}")
    if totals.cache_read:
        parts.append(f"R{format_tokens(totals.cache_read)}")
    if totals.cache_write:
        parts.append(f"W{format_tokens(totals.cache_write)}")
    if totals.cost:
        parts.append(f"${to_fixed(totals.cost, 3)}")
    percent = context_percent(context_tokens, context_window)
    shown = "?" if percent is None else f"{to_fixed(percent, 1)}%"
    context = f"{shown}/{format_tokens(max(context_window, 0))}"
    if auto_compact:
        context += " (auto)"
    parts.append(context)
    return " ".join(parts)


def footer_model_text(model_id: str, thinking_level: str, reasoning: bool) -> str:
    """The model on the right of the footer; the thinking level only for reasoning models."""
    name = model_id or "no-model"
    if not reasoning:
        return name
    level = thinking_level or "off"
    return f"{name} • thinking off" if level == "off" else f"{name} • {level}"
