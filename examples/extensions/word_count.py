"""A tool with its own card: ``word_count`` counts the lines, words and characters of files.

Shows a pydantic model as the parameters (the model's mistakes come back as errors naming the
field), streaming progress with ``ctx.update``, ``details`` for the renderer, and
``render_call`` / ``render_result`` drawing the tool card in the chat.

    pi-tui -e examples/extensions/word_count.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pi_tui.extensions import ExtensionAPI


class WordCountArgs(BaseModel):
    paths: list[str] = Field(description="Files to count, relative to the project folder")


def count(text: str) -> dict[str, int]:
    return {"lines": text.count("\n"), "words": len(text.split()), "chars": len(text)}


def activate(pi: ExtensionAPI) -> None:
    async def execute(call_id: str, params: WordCountArgs, ctx: Any) -> dict[str, Any]:
        totals: dict[str, dict[str, int]] = {}
        for number, name in enumerate(params.paths, start=1):
            ctx.update(f"counting {name} ({number}/{len(params.paths)})")
            path = Path(ctx.cwd, name)
            try:
                totals[name] = count(path.read_text(encoding="utf-8", errors="replace"))
            except OSError as error:
                raise ValueError(f"cannot read {name}: {error.strerror}") from None
        lines = [
            f"{name}: {c['lines']} lines, {c['words']} words, {c['chars']} characters"
            for name, c in totals.items()
        ]
        return {"content": [{"type": "text", "text": "\n".join(lines)}], "details": {"totals": totals}}

    def render_call(args: dict[str, Any], expanded: bool) -> str:
        return "word_count " + " ".join(args.get("paths", []))

    def render_result(result: Any, expanded: bool) -> str:
        totals = (result.details or {}).get("totals") if not result.is_error else None
        if not totals:
            return result.text
        words = sum(c["words"] for c in totals.values())
        head = f"{words} words in {len(totals)} file{'s' if len(totals) != 1 else ''}"
        if not expanded:
            return head
        return head + "\n" + "\n".join(f"  {name}: {c['words']}" for name, c in totals.items())

    pi.register_tool(
        "word_count",
        label="Word count",
        description="Count the lines, words and characters of text files.",
        parameters=WordCountArgs,
        execute=execute,
        render_call=render_call,
        render_result=render_result,
        prompt_snippet="count lines, words and characters of files",
    )
