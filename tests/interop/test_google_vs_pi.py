"""Google's Gemini API (``google-generative-ai``): pi-tui sends the request pi 1.5.2 sends.

Both programs run ``-p`` on pi's ``google`` provider with ``GEMINI_API_KEY`` and a models.json
``baseUrl`` override pointing at a loopback model server of their own; the two run side by side.
The path, the key header and the body must agree, the system prompt's and tools' texts aside
(each program has its own). One case also has the model call ``read`` once, so the second
request carries a ``functionCall`` and its ``functionResponse``: Gemini 3 gets the call ids,
Gemini 2.5 does not, and the call's signature goes back on its part.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.in_process import Ran, run_main
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec
from tests.support.real_pi import pi_cli, pi_env

pytestmark = pytest.mark.pi_interop

STRICT_TOOLS = {"functionCallingConfig": {"mode": "VALIDATED"}}
"""The one known difference: pi 1.5.2 marks its four built-in tools for JSON-schema constrained
sampling, so on Gemini 3 and later it adds this ``toolConfig`` (and sends the tools' schemas made
strict); pi-tui's tools carry no such mark yet (docs/pi-parity.md)."""
SIGNATURE = "c2lnbmVkLWNhbGw="
"""A base64 ``thoughtSignature`` the scripted call carries (Gemini's signatures are base64)."""


def shape(request: RecordedRequest) -> dict[str, Any]:
    """What must agree: everything but the system prompt's and the tools' own texts."""
    body = dict(request.body)
    body.pop("toolConfig", None)  # see STRICT_TOOLS
    system = body.pop("systemInstruction", None)
    tools = body.pop("tools", None) or []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            response = part.get("functionResponse", {}).get("response")
            if isinstance(response, dict):  # the read tool's output is each program's own wording
                part["functionResponse"]["response"] = {key: "…" for key in response}
    return {
        "path": request.path,
        "query": request.query,
        "key": request.headers.get("x-goog-api-key"),
        "authorization": request.headers.get("authorization"),
        "body": body,
        "system keys": sorted(system or {}),
        "system parts": [sorted(part) for part in (system or {}).get("parts", [])],
        "tool groups": [sorted(group) for group in tools],
        "tool fields": sorted(
            {key for group in tools for d in group.get("functionDeclarations", []) for key in d}
        ),
    }


HELLO_CASES = [
    ("gemini-2.5-flash", "off"),
    ("gemini-2.5-flash", "medium"),
    ("gemini-2.5-flash-lite", "minimal"),
    ("gemini-2.5-pro", "high"),
    ("gemini-pro-latest", "low"),
    ("deep-research-preview-04-2026", "medium"),
    ("gemini-3-flash-preview", "minimal"),
    ("gemini-3.1-pro-preview", "off"),
    ("gemma-4-31b-it", "medium"),
    ("gemini-4-argon", "high"),
]


def gemini_api(folder: Path, server: ModelServer) -> dict[str, str]:
    """pi's ``google`` provider at ``server``: a models.json ``baseUrl`` and ``GEMINI_API_KEY``."""
    models = {"providers": {"google": {"baseUrl": server.base_url}}}
    (folder / "models.json").write_text(json.dumps(models))
    return {"GEMINI_API_KEY": "test-key"}


def run_both(
    tmp_path: Path,
    provider: str,
    setup: Callable[[Path, ModelServer], dict[str, str]],
    model: str,
    level: str,
    prompt: str,
    *replies: Scripted,
    script: bool = False,
) -> tuple[list[RecordedRequest], list[RecordedRequest]]:
    """pi-tui's and pi's requests for one ``-p`` run each, the two programs running at once, each
    with its own model server; ``setup`` points an agent folder at a server and gives the
    variables to set. pi-tui runs through the installed script's entry point in this process
    (tests/support/in_process.py: the same request without a Python start-up, most of a case's
    CPU), through the installed script itself with ``script`` (the first case of each file)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "note.txt").write_text("a note\n")
    args = ["--provider", provider, "--model", model, "--thinking", level, "-p", prompt]
    with ModelServer(*replies) as ours_server, ModelServer(*replies) as pis_server:
        dirs, envs = {}, {}
        for name, server in (("ours", ours_server), ("pis", pis_server)):
            folder = tmp_path / name
            folder.mkdir()
            dirs[name] = folder
            envs[name] = {"HOME": str(tmp_path), **setup(folder, server)}
        theirs = subprocess.Popen(
            [*pi_cli("1.5.2"), *args],
            cwd=project,
            env=pi_env(dirs["pis"], version="1.5.2", env=envs["pis"]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        full = {
            k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOOGLE")
        }
        full.update({"PI_CODING_AGENT_DIR": str(dirs["ours"]), **envs["ours"]})
        ours_run: subprocess.CompletedProcess[str] | Ran
        if script:
            ours_run = subprocess.run(
                [SCRIPT, *args],
                cwd=project,
                env=full,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=120,
            )
        else:  # while pi runs beside it
            ours_run = run_main(args, cwd=project, env=full)
        out, err = theirs.communicate(timeout=120)
        assert theirs.returncode == 0, err
        assert ours_run.returncode == 0, ours_run.stderr
        assert ours_run.stdout.strip() == out.strip()
        return ours_server.requests, pis_server.requests


@pytest.mark.parametrize(("model", "level"), HELLO_CASES)
def test_request_matches_pi(model: str, level: str, tmp_path: Path) -> None:
    first = (model, level) == HELLO_CASES[0]
    ours, theirs = run_both(tmp_path, "google", gemini_api, model, level, "hello", script=first)
    assert len(ours) == len(theirs) == 1
    assert shape(ours[0]) == shape(theirs[0])
    assert "toolConfig" not in ours[0].body
    generation = re.match(r"gemini-(\d+)", model)
    strict = generation is not None and int(generation.group(1)) >= 3
    assert theirs[0].body.get("toolConfig") == (STRICT_TOOLS if strict else None)
    assert shape(ours[0])["path"] == f"/models/{model}:streamGenerateContent"
    assert shape(ours[0])["query"] == {"alt": "sse"} and shape(ours[0])["key"] == "test-key"
    assert shape(ours[0])["tool fields"] == ["description", "name", "parametersJsonSchema"]


@pytest.mark.parametrize(("model", "ids"), [("gemini-2.5-flash", False), ("gemini-3-flash-preview", True)])
def test_a_tool_call_goes_back_as_pi_sends_it(model: str, ids: bool, tmp_path: Path) -> None:
    call = ToolCallSpec("read", {"path": "note.txt"}, id="call-1", signature=SIGNATURE)
    reply = Scripted(tool_calls=[call])
    ours, theirs = run_both(tmp_path, "google", gemini_api, model, "low", "read note.txt", reply)
    check_tool_round_trip(ours, theirs, ids)


def check_tool_round_trip(ours: list[RecordedRequest], theirs: list[RecordedRequest], ids: bool) -> None:
    """The second request (after ``read`` ran) agrees with pi's; the call's signature went back,
    and the call id did exactly when ``ids``."""
    assert len(ours) == len(theirs) == 2
    assert shape(ours[1]) == shape(theirs[1])
    sent_call, sent_result = ours[1].body["contents"][1:3]
    assert sent_call["parts"][-1]["thoughtSignature"] == SIGNATURE
    assert sent_call["parts"][-1]["functionCall"].get("id") == ("call-1" if ids else None)
    assert sent_result["parts"][0]["functionResponse"].get("id") == ("call-1" if ids else None)
