"""Issue 28, items 2 (regexes), 4, 5 and 8 (tool environment): secrets through the installed
script and the real server, against the loopback model server.

- a value holding ``"`` and ``\\`` (and a non-ASCII letter) stays hidden on openai-completions in
  every escaping the request can give it: in tool output (raw, escaped once, ``\\uXXXX``), in
  the assistant's tool-call ``function.arguments`` (a JSON string in JSON: escaped twice) and in
  a JSON file inside those arguments (three times); the placeholder the model writes into a
  JSON file comes back as the value, escaped, so the file stays valid;
- a catastrophic regex in the project's ``.agent/secrets.yml`` costs no request its seconds: it
  is refused with one warning naming the file and line;
- the bash tool's ``env`` shows neither ``PI_TUI_SERVE_TOKEN`` nor a provider key pi-tui uses;
- ``--export`` run from another folder hides the session folder's ``.env`` password.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
from pathlib import Path

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec
from tests.support.serve import ServeProcess, wait_idle

TRICKY = 'hü"nter\\2-horse-battery'
"""A password with a quote, a backslash and a letter JSON may write as ``\\u00fc``."""
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PLACEHOLDER = re.compile(r"<<secret:[0-9a-f]{10}>>")


def escaped(value: str, levels: int) -> set[str]:
    """``value`` JSON-escaped ``levels`` times, each level with or without ``\\uXXXX``."""
    forms = {value}
    for _ in range(levels):
        forms = {
            json.dumps(form, ensure_ascii=ascii_only)[1:-1] for form in forms for ascii_only in (True, False)
        }
    return forms


def base64_forms(value: str) -> set[bytes]:
    """``value`` in base64 text, starting at each of the three byte offsets."""
    raw = value.encode()
    return {
        base64.b64encode((b"\0" * pad + raw)[: (pad + len(raw)) // 3 * 3])[4 if pad else 0 :]
        for pad in range(3)
    }


def all_forms(value: str) -> set[bytes]:
    """Every shape ``value`` could leave in: raw, escaped up to three times, base64."""
    return {form.encode() for levels in range(4) for form in escaped(value, levels)} | base64_forms(value)


def write_json_config(request: RecordedRequest) -> Scripted:
    """The model writes the placeholder it was shown for DB_PASSWORD into a JSON file."""
    seen = json.dumps(request.body)
    shown = re.search(r"DB_PASSWORD='(<<secret:[0-9a-f]{10}>>)'", seen)
    assert shown is not None, "the model must see a placeholder for the password"
    content = json.dumps({"password": shown.group(1)})
    return Scripted(tool_calls=[ToolCallSpec("write", {"path": "placeholder.json", "content": content})])


def test_escaped_forms_of_a_value_stay_hidden_on_openai_completions(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"DB_PASSWORD='{TRICKY}'\nDEBUG=1\n")
    (project / "token.txt").write_text(f"deploy with {GITHUB_TOKEN}\n")
    (agent_dir / "settings.json").write_text(json.dumps({"secrets": {"enabled": True}}))
    dump_env = "python3 -c 'import json; print(json.dumps(open(\".env\").read()))'"
    # a pattern match in base64, and the value reversed, in hex and URL-encoded
    transforms = (
        "base64 -w0 token.txt; echo; rev .env; xxd -p .env | tr -d '\\n'; echo; "
        "python3 -c 'import urllib.parse; print(urllib.parse.quote(open(\".env\").read()))'"
    )
    replies = [
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "cat .env"})]),
        # the value once escaped in tool output, with \u00fc: what json.dumps prints
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": dump_env})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": transforms})]),
        # the model sends the value itself: the next requests carry it in function.arguments
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": f"printf %s '{TRICKY}' | wc -c"})]),
        # ... and inside a JSON file in the arguments (escaped twice there, three times on the wire)
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "copy.json", "content": json.dumps({"password": TRICKY})})
            ]
        ),
        write_json_config,
        Scripted(text="Done."),
    ]
    with ModelServer(*replies) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(api="openai-completions")))
        done = subprocess.run(
            [SCRIPT, "--provider", "test", "--model", "m", "-p", "configure the app"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        requests = server.requests
    assert len(requests) == 7
    hex_form = TRICKY.encode().hex().encode()
    for request in requests:
        for form in all_forms(TRICKY) | base64_forms(GITHUB_TOKEN) | {hex_form, TRICKY[::-1].encode()}:
            assert form not in request.raw_body, f"request {requests.index(request)} carries {form!r}"
        assert b"h%C3%BC%22nter%5C2-horse-battery" not in request.raw_body
    transformed = requests[3].raw_body  # the commands ran: their output is there, the value is not
    assert b"=DROWSSAP_BD" in transformed and b"DB_PASSWORD".hex().encode() in transformed
    assert b"DB_PASSWORD%3D" in transformed and transformed.count(b"<<secret:") >= 4
    arguments = [
        call["function"]["arguments"]
        for message in requests[-1].body["messages"]
        for call in message.get("tool_calls") or []
    ]
    assert len(arguments) == 6 and all(PLACEHOLDER.search(text) for text in arguments[3:5])
    # the model's placeholder inside a JSON file became the value, escaped: the file is valid
    assert json.loads((project / "placeholder.json").read_text()) == {"password": TRICKY}
    assert json.loads((project / "copy.json").read_text()) == {"password": TRICKY}


def test_a_catastrophic_project_regex_costs_no_request_its_seconds(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "secrets.yml").write_text(
        "- type: regex\n  content: 'acct-[0-9]{6}'\n  mode: replace\n- type: regex\n  content: '(a+)+$'\n"
    )
    (agent_dir / "settings.json").write_text(json.dumps({"secrets": {"enabled": True}}))
    prompt = "a" * 30 + "! and account acct-204861"
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        began = time.monotonic()
        done = subprocess.run(
            [SCRIPT, "--provider", "test", "--model", "m", "-p", prompt],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,  # before: (a+)+$ over 30 a's took minutes
        )
        took = time.monotonic() - began
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    warnings = [line for line in done.stderr.splitlines() if "(a+)+$" in line]
    assert len(warnings) == 1, done.stderr
    assert f"{project / '.agent' / 'secrets.yml'}:4:" in warnings[0] and "warning" in warnings[0]
    assert took < 8, f"one request took {took:.1f} s"
    # the other patterns still count
    assert b"acct-204861" not in request.raw_body and b"account ***********" in request.raw_body


def test_bash_env_holds_neither_the_server_token_nor_a_provider_key(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    token = "serve-token-5f0c9e7a1b2d"
    provider_key = "sk-ant-provider-key-00112233445566"
    models_key = "models-json-key-9988776655"
    replies = [Scripted(tool_calls=[ToolCallSpec("bash", {"command": "env"})]), Scripted(text="Seen.")]
    with ModelServer(*replies) as server:
        document = server.models_json(api_key="MY_LLM_KEY")  # a variable's name: pi-tui uses its value
        document["providers"]["test"]["models"][0]["contextWindow"] = 200000
        (agent_dir / "models.json").write_text(json.dumps(document))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        env = {
            "PI_TUI_SERVE_TOKEN": token,
            "ANTHROPIC_API_KEY": provider_key,
            "MY_LLM_KEY": models_key,
            "PROJECT_DB_TOKEN": "the-tools-need-this-one",
        }
        with ServeProcess(project, token=None, env=env) as running, running.client(token=token) as client:
            session_id = client.post("/sessions", json={}).json()["id"]
            client.post(f"/sessions/{session_id}/commands", json={"type": "prompt", "message": "show env"})
            server.wait_for_requests(2, timeout=30)
            wait_idle(client, session_id)
            path = Path(client.get(f"/sessions/{session_id}").json()["path"])
        requests = server.requests
    session = path.read_text()
    results = [
        json.loads(line)["message"]
        for line in session.splitlines()
        if '"toolResult"' in line and json.loads(line).get("type") == "message"
    ]
    (result,) = results
    output = "".join(part.get("text", "") for part in result["content"])
    assert "PROJECT_DB_TOKEN=the-tools-need-this-one" in output  # the user's own variables stay
    for name, value in (
        ("PI_TUI_SERVE_TOKEN", token),
        ("ANTHROPIC_API_KEY", provider_key),
        ("MY_LLM_KEY", models_key),
    ):
        assert name not in output and value not in output
    assert all(token.encode() not in request.raw_body for request in requests)


def test_export_from_another_folder_hides_the_session_folders_dotenv(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.messages import ToolCall
    from pi_tui.session import SessionManager
    from tests.support.builders import assistant, tool_result, user

    password = "s3ssion-folder-pa55word"
    recorded = "recorded-only-token-4242"
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"DB_PASSWORD={password}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"secrets": {"enabled": True}}))
    manager = SessionManager.create(str(project), tmp_path / "sessions")
    manager.append_message(user("read .env and show the environment"))
    call = ToolCall(id="call-1", name="bash", arguments={"command": "cat .env; env"})
    manager.append_message(assistant("Reading.", call, stop_reason="toolUse"))
    manager.append_message(
        tool_result("call-1", f"DB_PASSWORD={password}\nDEPLOY_TOKEN={recorded}\nHOME=/root\n")
    )
    manager.close()
    assert manager.session_file is not None
    done = subprocess.run(
        [SCRIPT, "--export", str(manager.session_file), "page.html"],
        cwd=elsewhere,
        env={key: value for key, value in os.environ.items() if key != "DEPLOY_TOKEN"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    page = (elsewhere / "page.html").read_text()
    assert password not in page and recorded not in page
    assert "DB_PASSWORD=\\u003c\\u003csecret:" in page or "DB_PASSWORD=<<secret:" in page
