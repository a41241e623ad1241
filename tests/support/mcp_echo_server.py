"""The smallest MCP server that works, for tests where any server will do.

Written by hand over stdio (newline-delimited JSON-RPC, the MCP stdio transport) with nothing
but the standard library, so it starts in a few milliseconds where a server on the SDK takes a
second of imports: tests that start many sessions only to look at tool names use it. It
answers ``initialize`` (the client's protocol version), ``ping``, ``tools/list`` (``echo`` and
``add``) and ``tools/call``; anything else is a method-not-found error::

    python -m tests.support.mcp_echo_server
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Say the message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The result of one request (raises LookupError for a method this server does not have)."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo-server", "version": "1.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        if params.get("name") == "echo":
            text = f"echo: {arguments.get('message', '')}"
        elif params.get("name") == "add":
            text = f"{arguments.get('a', 0) + arguments.get('b', 0)}"
        else:
            return {"content": [{"type": "text", "text": f"no tool {params.get('name')}"}], "isError": True}
        return {"content": [{"type": "text", "text": text}]}
    raise LookupError(method)


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message or "method" not in message:
            continue  # a notification or a response: nothing to say
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {})
        except LookupError:
            reply["error"] = {"code": -32601, "message": f"Method not found: {message['method']}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
