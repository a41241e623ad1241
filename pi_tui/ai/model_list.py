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
    """As pi writes a size in the same table: whole thousands or millions bare, else one
    decimal (65,535 -> ``65.5K``; 1,048,576 -> ``1.0M``)."""
    for unit, size in (("M", 1_000_000), ("K", 1000)):
        if count >= size:
            return f"{count // size}{unit}" if count % size == 0 else f"{count / size:.1f}{unit}"
    return str(count)
