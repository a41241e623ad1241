"""A tiny ACP agent on the Python SDK (``acp``), only to test the test harness itself.

:mod:`tests.support.acp_client` must be shown to work before it judges ``pi-tui acp``: that it
carries requests and answers both ways, answers the agent's file, terminal and permission
requests for real, delivers a cancel, and reports a message the schema rejects. This agent
makes each of those happen on demand. A prompt whose text is a JSON list of steps runs them in
order; any other prompt is echoed back (``echo: <text>``). Each step that learns something says
it as one agent message chunk holding a JSON object and a newline, so a test parses the lines::

    [{"do": "say", "text": "hi"}]                      "hi", streamed in two chunks
    [{"do": "tool"}]                                   a tool call, then its completing update
    [{"do": "permission"}]                             {"permission": "<optionId>" | "cancelled"}
    [{"do": "read", "path": P, "line": 2, "limit": 1}] {"read": text} or {"read_error": code}
    [{"do": "write", "path": P, "content": C}]         {"wrote": P}
    [{"do": "run", "command": C, "args": [...], "env": {...}, "cwd": D, "outputByteLimit": N,
      "kill": false}]                                  {"output", "truncated", "exit"}
    [{"do": "bad_update"}]                             a session/update without its content
    [{"do": "garbage", "text": T}]                     T as a bare line on stdout
    [{"do": "wait_cancel"}]                            waits for session/cancel (or a
                                                       $/cancel_request of the prompt): stop
                                                       reason cancelled

``session/list`` with the cwd :data:`BAD_RESULT_CWD` answers a result the schema rejects, and
extension methods answer ``{"method", "params", "pid"}``.

Run as ``python -m tests.support.acp_echo_agent`` (stdin and stdout carry ACP).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any

import acp
from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    EnvVariable,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionInfo,
    SetSessionModeResponse,
    ToolCallUpdate,
)

BAD_RESULT_CWD = "/acp-echo-agent/bad-result"


class EchoAgent:
    """The agent side (the methods :class:`acp.Agent` names that the harness tests call)."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, str] = {}  # session id -> cwd
        self.prompts: dict[str, list[str]] = {}  # session id -> its prompt texts, for session/load
        self.cancelled: dict[str, asyncio.Event] = {}
        self.numbers = itertools.count(1)
        self.prompt_requests: dict[Any, str] = {}  # JSON-RPC id of each prompt -> its session

    def observe(self, event: StreamEvent) -> None:
        """Honours ``$/cancel_request`` for a prompt like ``session/cancel`` (the Python SDK
        leaves that protocol notification to the application; its stream observers see it)."""
        if event.direction is not StreamDirection.INCOMING:
            return
        message = event.message
        params = message.get("params") or {}
        if message.get("method") == "session/prompt" and isinstance(params.get("sessionId"), str):
            self.prompt_requests[message.get("id")] = params["sessionId"]
        elif message.get("method") == "$/cancel_request":
            session_id = self.prompt_requests.get(params.get("requestId"))
            if session_id is not None:
                self.cancelled.setdefault(session_id, asyncio.Event()).set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name="acp-echo-agent", version="1"),
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"echo-{next(self.numbers)}"
        self.sessions[session_id] = cwd
        self.prompts[session_id] = []
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        """Replays the session's prompts as user message chunks, as session/load asks."""
        if session_id not in self.sessions:
            raise RequestError.resource_not_found(session_id)
        for text in self.prompts[session_id]:
            await self.conn.session_update(session_id=session_id, update=acp.update_user_message_text(text))
        return LoadSessionResponse()

    async def list_sessions(self, cwd: str | None = None, **_: Any) -> ListSessionsResponse | dict[str, Any]:
        """Lists the sessions; for the cwd :data:`BAD_RESULT_CWD` a result the schema rejects (a
        session without its cwd and with a number for its id), to show results are checked too."""
        if cwd == BAD_RESULT_CWD:
            return {"sessions": [{"sessionId": 7}]}
        return ListSessionsResponse(
            sessions=[SessionInfo(session_id=key, cwd=cwd) for key, cwd in self.sessions.items()]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        return SetSessionModeResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Says the call back, with this process's id (a test checks the agent is gone after)."""
        return {"method": method, "params": params, "pid": os.getpid()}

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        self.prompts.setdefault(session_id, []).append(text)
        self.cancelled[session_id] = asyncio.Event()
        try:
            steps = json.loads(text)
        except json.JSONDecodeError:
            steps = None
        if not isinstance(steps, list):
            await self.say(session_id, f"echo: {text}")
            return PromptResponse(stop_reason="end_turn")
        for step in steps:
            if await self.step(session_id, step) == "cancelled":
                return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    async def say(self, session_id: str, text: str) -> None:
        """Two chunks, so a test sees the text streamed rather than in one piece."""
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            if part:
                await self.conn.session_update(
                    session_id=session_id, update=acp.update_agent_message_text(part)
                )

    async def tell(self, session_id: str, fact: dict[str, Any]) -> None:
        await self.conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(json.dumps(fact) + "\n")
        )

    async def step(self, session_id: str, step: dict[str, Any]) -> str | None:
        what = step["do"]
        if what == "say":
            await self.say(session_id, step["text"])
        elif what == "tool":
            await self.conn.session_update(
                session_id=session_id,
                update=acp.start_tool_call("call-1", "Echo tool", kind="other", status="in_progress"),
            )
            await self.conn.session_update(
                session_id=session_id,
                update=acp.update_tool_call(
                    "call-1", status="completed", content=[acp.tool_content(acp.text_block("tool done"))]
                ),
            )
        elif what == "permission":
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="call-1", title="Echo tool"),
                options=[
                    PermissionOption(option_id=f"opt-{kind}", name=kind, kind=kind)
                    for kind in ("allow_once", "allow_always", "reject_once", "reject_always")
                ],
            )
            outcome = answer.outcome
            chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else outcome.outcome
            await self.tell(session_id, {"permission": chosen})
        elif what == "read":
            try:
                read = await self.conn.read_text_file(
                    session_id=session_id, path=step["path"], line=step.get("line"), limit=step.get("limit")
                )
            except RequestError as error:
                await self.tell(session_id, {"read_error": error.code})
            else:
                await self.tell(session_id, {"read": read.content})
        elif what == "write":
            await self.conn.write_text_file(session_id=session_id, path=step["path"], content=step["content"])
            await self.tell(session_id, {"wrote": step["path"]})
        elif what == "run":
            await self.run(session_id, step)
        elif what == "bad_update":
            # Straight onto the wire: the SDK's own models would refuse to build it.
            await self.conn._conn.send_notification(
                "session/update",
                {"sessionId": session_id, "update": {"sessionUpdate": "agent_message_chunk"}},
            )
        elif what == "garbage":
            os.write(1, step["text"].encode() + b"\n")
        elif what == "wait_cancel":
            await self.cancelled[session_id].wait()
            return "cancelled"
        else:
            raise RequestError.invalid_params({"unknown step": what})
        return None

    async def run(self, session_id: str, step: dict[str, Any]) -> None:
        created = await self.conn.create_terminal(
            session_id=session_id,
            command=step["command"],
            args=step.get("args", []),
            env=[EnvVariable(name=key, value=value) for key, value in step.get("env", {}).items()],
            cwd=step.get("cwd"),
            output_byte_limit=step.get("outputByteLimit"),
        )
        terminal_id = created.terminal_id
        if step.get("kill"):
            await self.conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        exited = await self.conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        output = await self.conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
        await self.conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
        await self.tell(
            session_id,
            {
                "output": output.output,
                "truncated": output.truncated,
                "exit": {"exitCode": exited.exit_code, "signal": exited.signal},
            },
        )


def main() -> None:
    agent = EchoAgent()
    asyncio.run(acp.run_agent(agent, observers=[agent.observe]))  # type: ignore[arg-type]  # an acp.Agent


if __name__ == "__main__":
    main()
