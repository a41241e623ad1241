"""Regenerate the cross-provider cases: session files by hand, requests from the real pi 1.5.2.

Recorded with pi 1.5.2 (:data:`PI`): where pi 1.x and 0.73 replay another model's replies
differently (0.73 sent its thinking as text and kept only the call half of ``call|item``), pi 1.x
is the rule pi-tui follows.

Each case is a pi-format session written by one API kind (its assistant messages carry that
API's ids, thinking and signatures). For every target in ``TARGETS[case]`` the real pi continues
a copy of the file with ``--session COPY -c -p next`` against the loopback model server, with a
models.json whose only provider speaks the target API kind; the body of the request pi sends is
saved as ``<case>/request-<label>.json`` and the target itself in ``<case>/targets.json``.

Run from the repository root: ``python -m tests.data.cross-provider.make`` does not work (the
folder name has a dash), so: ``PYTHONPATH=. python tests/data/cross-provider/make.py``.
Needs node and npm (the real pi is installed into the user cache on first use).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.support.model_server import ModelServer  # noqa: E402
from tests.support.real_pi import run_pi, write_models_json  # noqa: E402

PI = "1.5.2"
"""The pi whose requests are recorded."""
CWD = "/home/user/project"
TEXT_ONLY = ["text"]
VISION = ["text", "image"]
APIS = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
COMMENTARY = json.dumps({"v": 1, "id": "msg_0abc", "phase": "commentary"})
LONG_ITEM = "fc_0" + "Zq9+/xY=" * 52  # Responses item ids pass 400 characters, with + / =


def usage() -> dict[str, Any]:
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    return {**zero, "totalTokens": 0, "cost": {**zero, "total": 0}}


def assistant(
    api: str, provider: str, model: str, content: list[Any], stop: str = "stop", **extra: Any
) -> dict:
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage(),
        "stopReason": stop,
        "timestamp": 1795291973885,
        **extra,
    }


def user(content: Any) -> dict:
    return {"role": "user", "content": content, "timestamp": 1795291973800}


def result(call_id: str, name: str, content: list[Any], is_error: bool = False) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": 1795291973900,
    }


def text(value: str, **extra: Any) -> dict:
    return {"type": "text", "text": value, **extra}


def image() -> dict:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


def call(call_id: str, name: str, arguments: dict, **extra: Any) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments, **extra}


def thinking(value: str, signature: str | None = None, **extra: Any) -> dict:
    block: dict[str, Any] = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["thinkingSignature"] = signature
    return {**block, **extra}


def responses_case() -> list[dict]:
    api, provider, model = "openai-responses", "openai", "gpt-src"
    reasoning = {
        "type": "reasoning",
        "id": "rs_0123",
        "summary": [{"type": "summary_text", "text": "I should read both files."}],
        "encrypted_content": "RU5DUllQVEVE",
    }
    silent = {"type": "reasoning", "id": "rs_0456", "summary": [], "encrypted_content": "U0lMRU5U"}
    first = "call_Ab3+x/Y=|" + LONG_ITEM
    second = "call_2|item_9"
    return [
        user("Read a.txt and b.txt"),
        assistant(
            api,
            provider,
            model,
            [
                thinking("I should read both files.", json.dumps(reasoning)),
                text("Reading both.", textSignature=COMMENTARY),
                call(first, "read", {"path": "a.txt"}),
                call(second, "read", {"path": "b.txt"}),
            ],
            "toolUse",
        ),
        result(first, "read", [text("hello")]),
        result(second, "read", [text("world")]),
        assistant(
            api,
            provider,
            model,
            [thinking("", json.dumps(silent)), text("They say hello world.", textSignature="msg_plainid")],
        ),
    ]


def anthropic_case() -> list[dict]:
    api, provider, model = "anthropic-messages", "ant", "claude-src"
    return [
        user("List the files"),
        assistant(
            api,
            provider,
            model,
            [
                thinking("Let me think.", "c2lnLWFudA=="),
                thinking("", "UkVEQUNURUQ=", redacted=True),
                text("Sure."),
                call("toolu_01ABCdef", "bash", {"command": "ls"}),
            ],
            "toolUse",
        ),
        result("toolu_01ABCdef", "bash", [text("a.txt")]),
        assistant(api, provider, model, [thinking("Unsigned thought."), text("One file: a.txt.")]),
    ]


def google_case() -> list[dict]:
    api, provider, model = "google-generative-ai", "goo", "gemini-2.5-src"
    return [
        user("What is in a.txt?"),
        assistant(
            api,
            provider,
            model,
            [
                thinking("Thinking about it.", "dGhvdWdodA=="),
                text("Let me look.", textSignature="dGV4dHNpZw=="),
                call("read_1732_0", "read", {"path": "a.txt"}, thoughtSignature="Y2FsbHNpZw=="),
            ],
            "toolUse",
        ),
        result("read_1732_0", "read", [text("hello")]),
        assistant(api, provider, model, [text("It says hello.", textSignature="not base64!")]),
    ]


def completions_case() -> list[dict]:
    api, provider, model = "openai-completions", "compat", "qwen-src"
    long_id = "call_0123456789012345678901234567890123456789xyz"
    details = json.dumps({"type": "reasoning.encrypted", "id": long_id, "data": "YWJj"})
    return [
        user("Check a.txt"),
        assistant(
            api,
            provider,
            model,
            [
                thinking("Reasoning here.", "reasoning_content"),
                text("Calling the tool."),
                call(long_id, "read", {"path": "a.txt"}, thoughtSignature=details),
            ],
            "toolUse",
        ),
        result(long_id, "read", [text("hello")]),
        assistant(api, provider, model, [text("Done.")]),
    ]


def images_case() -> list[dict]:
    api, provider, model = "openai-completions", "loop", "vision-src"
    return [
        user([text("Look at these:"), image(), image(), text("and this"), image()]),
        assistant(
            api,
            provider,
            model,
            [call("call_img1", "read", {"path": "a.png"}), call("call_img2", "read", {"path": "b.png"})],
            "toolUse",
        ),
        result("call_img1", "read", [image()]),
        result("call_img2", "read", [text("Read image file [image/png]"), image()]),
        assistant(api, provider, model, [text("Two cats.")]),
    ]


def orphans_case() -> list[dict]:
    api, provider, model = "anthropic-messages", "loop", "src"
    return [
        user("Do two things"),
        assistant(
            api,
            provider,
            model,
            [call("toolu_c1", "bash", {"command": "ls"}), call("toolu_c2", "bash", {"command": "pwd"})],
            "toolUse",
        ),
        result("toolu_c1", "bash", [text("a.txt")]),
        user("Stop, do something else"),
        assistant(
            api,
            provider,
            model,
            [text("Starting"), call("toolu_c3", "bash", {"command": "sleep 100"})],
            "aborted",
            errorMessage="Request was aborted",
        ),
        user("Try again"),
        assistant(
            api,
            provider,
            model,
            [call("toolu_c4", "bash", {"command": "date"})],
            "error",
            errorMessage="500 internal error",
        ),
        result("toolu_c4", "bash", [text("Mon Nov 23")]),
        assistant(api, provider, model, [call("toolu_c5", "read", {"path": "x"})], "toolUse"),
    ]


CASES = {
    "responses-source": responses_case,
    "anthropic-source": anthropic_case,
    "google-source": google_case,
    "completions-source": completions_case,
    "images": images_case,
    "orphans": orphans_case,
}


def cross(input_: list[str] = VISION, suffix: str = "") -> dict[str, dict]:
    """The target on provider ``loop``, model ``tgt``, for every API kind."""
    return {
        f"{api}{suffix}": {"api": api, "provider": "loop", "model": "tgt", "input": input_} for api in APIS
    }


def same(api: str, provider: str, model: str) -> dict[str, dict]:
    return {"same-model": {"api": api, "provider": provider, "model": model, "input": VISION}}


TARGETS: dict[str, dict[str, dict]] = {
    "responses-source": {
        **cross(),
        **same("openai-responses", "openai", "gpt-src"),
        "openai-responses-other-model": {
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-other",
            "input": VISION,
        },
        "openai-completions-openai-provider": {
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-tgt",
            "input": VISION,
        },
        "openai-responses-opencode-provider": {
            "api": "openai-responses",
            "provider": "opencode",
            "model": "gpt-tgt",
            "input": VISION,
        },
        "google-generative-ai-claude": {
            "api": "google-generative-ai",
            "provider": "loop",
            "model": "claude-tgt",
            "input": VISION,
        },
    },
    "anthropic-source": {**cross(), **same("anthropic-messages", "ant", "claude-src")},
    "google-source": {
        **cross(),
        **same("google-generative-ai", "goo", "gemini-2.5-src"),
        "openai-completions-same-provider-model": {
            "api": "openai-completions",
            "provider": "goo",
            "model": "gemini-2.5-src",
            "input": VISION,
        },
    },
    "completions-source": {
        **cross(),
        **same("openai-completions", "compat", "qwen-src"),
        "openai-completions-openai-provider": {
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-tgt",
            "input": VISION,
        },
    },
    "images": {
        **cross(TEXT_ONLY),
        **cross(VISION, "-vision"),
        "google-generative-ai-gemini-2-vision": {
            "api": "google-generative-ai",
            "provider": "loop",
            "model": "gemini-2.0-tgt",
            "input": VISION,
        },
    },
    "orphans": cross(),
}


def session_lines(messages: list[dict], cwd: str) -> list[str]:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "0199a1f0-0000-7000-8000-000000000001",
            "timestamp": "2026-11-23T20:00:00.000Z",
            "cwd": cwd,
        }
    ]
    parent = None
    for number, message in enumerate(messages, 1):
        entry_id = f"e{number:07d}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": f"2026-11-23T20:00:{number:02d}.000Z",
                "message": message,
            }
        )
        parent = entry_id
    return [json.dumps(line, ensure_ascii=False) for line in lines]


def record(case: str, label: str, target: dict, work: Path) -> dict:
    project = work / "project"
    agent_dir = work / "agent"
    shutil.rmtree(work, ignore_errors=True)
    project.mkdir(parents=True)
    copy = work / "session.jsonl"
    copy.write_text("\n".join(session_lines(CASES[case](), str(project))) + "\n")
    with ModelServer() as server:
        write_models_json(
            agent_dir,
            server.base_url,
            api=target["api"],
            model=target["model"],
            provider=target["provider"],
            input=target["input"],
        )
        done = run_pi(
            [
                "--session",
                str(copy),
                "-c",
                "-p",
                "--no-tools",
                "--provider",
                target["provider"],
                "--model",
                target["model"],
                "next",
            ],
            agent_dir=agent_dir,
            cwd=project,
            pi=PI,
        )
        if done.returncode != 0 or not server.requests:
            raise SystemExit(f"{case}/{label}: pi exited {done.returncode}: {done.stderr[-2000:]}")
        return server.requests[0].body


def main() -> None:
    only = set(sys.argv[1:])
    for case, targets in TARGETS.items():
        if only and case not in only:
            continue
        folder = HERE / case
        folder.mkdir(exist_ok=True)
        (folder / "session.jsonl").write_text("\n".join(session_lines(CASES[case](), CWD)) + "\n")
        (folder / "targets.json").write_text(json.dumps(targets, indent=2) + "\n")
        with tempfile.TemporaryDirectory() as tmp:
            for label, target in targets.items():
                body = record(case, label, target, Path(tmp) / label)
                (folder / f"request-{label}.json").write_text(json.dumps(body, indent=1) + "\n")
                print(f"{case}/{label}: {len(json.dumps(body))} bytes")


if __name__ == "__main__":
    main()
