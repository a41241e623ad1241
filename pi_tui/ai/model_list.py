"""The ``--list-models`` table."""

from __future__ import annotations

from pi_tui.ai.types import Model


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
    if count >= 1_000_000 and count % 1_000_000 == 0:
        return f"{count // 1_000_000}M"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{round(count / 1000)}K"
    return str(count)
