"""A todo tool as extensions write them: the list is in the result's ``details``."""

from typing import Any


def activate(pi: Any) -> None:
    def execute(params: dict[str, Any]) -> dict[str, Any]:
        todos = [
            {"text": text, "done": index < int(params.get("done", 0))}
            for index, text in enumerate(params["items"])
        ]
        return {"content": [{"type": "text", "text": f"{len(todos)} todos"}], "details": {"todos": todos}}

    pi.register_tool(
        "todo",
        description="Keep the task list.",
        parameters={
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "string"}},
                "done": {"type": "integer"},
            },
            "required": ["items"],
        },
        execute=execute,
    )
