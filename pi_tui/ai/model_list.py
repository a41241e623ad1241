"""The ``--list-models`` table, and pi's fuzzy model search (also the /model and
/scoped-models filters): the query's characters in order, not necessarily together, so
``opus46`` finds ``claude-opus-4-6``; several words (or ``provider/id``) must each match."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from pi_tui.ai.types import Model

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry

T = TypeVar("T")

_BOUNDARY = re.compile(r"[\s\-_./:]")
_LETTERS_DIGITS = re.compile(r"^([a-z]+)([0-9]+)$")
_DIGITS_LETTERS = re.compile(r"^([0-9]+)([a-z]+)$")


def _score(text: str, positions: list[int]) -> float:
    """Lower is better: runs of adjacent characters and word starts count for, gaps and
    lateness against (pi's weights, so the same models come first)."""
    score = 0.0
    last = -1
    run = 0
    for i in positions:
        if last == i - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if i == 0 or _BOUNDARY.match(text[i - 1]):
            score -= 10
        score += i * 0.1
        last = i
    return score


def _match(query: str, text: str) -> float | None:
    """The score of lower-cased ``query`` in lower-cased ``text``; None when it does not match."""
    if not query:
        return 0.0
    if len(query) > len(text):
        return None
    positions: list[int] = []
    last = -1
    for char in query:
        i = text.find(char, last + 1)
        if i == -1:
            return None
        positions.append(i)
        last = i
    score = _score(text, positions)
    # the first-found characters may be scattered over an unrelated word ("opus" in
    # "openrouter ... claude-opus"): every place the query appears whole is scored too
    start = text.find(query)
    while start != -1:
        score = min(score, _score(text, list(range(start, start + len(query)))))
        start = text.find(query, start + 1)
    if query == text:
        score -= 100
    return score


def fuzzy_score(query: str, text: str) -> float | None:
    """One word against a text; a word of letters then digits (``opus46``) is also tried the
    other way round (``46opus``), a little worse. None: no match."""
    query, text = query.lower(), text.lower()
    score = _match(query, text)
    if score is not None:
        return score
    split = _LETTERS_DIGITS.match(query) or _DIGITS_LETTERS.match(query)
    if split is None:
        return None
    swapped = _match(split.group(2) + split.group(1), text)
    return None if swapped is None else swapped + 5


def fuzzy_filter(items: Iterable[T], query: str, text_of: Callable[[T], str]) -> list[T]:
    """The items every word of ``query`` (split at spaces and ``/``) matches, best first; all of
    them, in order, for an empty query."""
    words = [word for word in re.split(r"[\s/]+", query.strip()) if word]
    if not words:
        return list(items)
    scored: list[tuple[float, int, T]] = []
    for index, item in enumerate(items):
        text = text_of(item)
        total = 0.0
        for word in words:
            score = fuzzy_score(word, text)
            if score is None:
                break
            total += score
        else:
            scored.append((total, index, item))
    scored.sort(key=lambda row: (row[0], row[1]))
    return [item for _score_, _index, item in scored]


def picker_text(model: Model) -> str:
    """What the /model and /scoped-models filters search, as pi builds it: the provider, the
    ``provider/id`` and the id (so either alone matches at a word start), then the name."""
    name = f" {model.name}" if model.name else ""
    return f"{model.provider} {model.provider}/{model.id} {model.provider} {model.id}{name}"


def _collation_key(text: str) -> tuple[tuple[int, str], ...]:
    """Close to the locale order pi sorts with: punctuation, then digits, then letters, case
    ignored (``gpt-4`` before ``gpt-4.1`` before ``gpt-4o``; ``Qwen`` beside ``qwen``)."""
    return tuple((2 if char.isalpha() else 1 if char.isdigit() else 0, char.lower()) for char in text)


def listed_models(registry: ModelRegistry, search: str | None) -> list[Model]:
    """``--list-models [SEARCH]`` as pi answers it: only the models the user has credentials
    for (a key, a login, ambient cloud credentials), fuzzy-searched on ``provider id``, sorted by
    provider then id."""
    usable = {
        provider for provider in registry.providers() if provider != "offline" and registry.has_key(provider)
    }
    models = [model for model in registry.all() if model.provider in usable]
    if search:
        models = fuzzy_filter(models, search, lambda m: f"{m.provider} {m.id}")
    return sorted(models, key=lambda m: (_collation_key(m.provider), _collation_key(m.id)))


NO_MODELS = (
    "No models available. Use /login (or pi-tui auth login) to sign in to a provider or save its API key."
)
"""What ``--list-models`` says when no provider has credentials (pi: "No models available. Use
/login…")."""


def format_model_list(models: list[Model]) -> str:
    """The ``--list-models`` table: provider, model, context, max output, thinking, images."""
    header = ("provider", "model", "context", "max-out", "thinking", "images")
    rows = [
        (
            m.provider,
            m.id,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in models
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )


def _tokens(count: int) -> str:
    """As pi writes a size in the same table: whole thousands or millions bare, else one
    decimal (65,535 -> ``65.5K``; 1,048,576 -> ``1.0M``)."""
    for unit, size in (("M", 1_000_000), ("K", 1000)):
        if count >= size:
            return f"{count // size}{unit}" if count % size == 0 else f"{count / size:.1f}{unit}"
    return str(count)
