"""Issue 17, acceptance 1: with secrets on, nothing secret reaches the (loopback) provider.

The installed ``pi-tui -p`` runs a scripted model in a project holding a ``.env``, with a
``secrets.yml`` and secret-looking environment variables. The model reads ``.env``, runs
``env``, prints a GitHub-shaped token, base64-encodes ``.env`` and the environment, adds a key
to ``.env`` and reads it again, then writes a config using the placeholder it was shown,
and copies a replace-mode value back. The server's request log must hold none of the values
(raw, JSON-escaped or base64), the written config the real password, and the replaced value
must never come back.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from pathlib import Path

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec

DB_PASS = "correct-horse-battery-7"
SERVICE_TOKEN = "tok_live_9f8e7d6c5b4a3210"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
YML_PLAIN = "launch code: zebra-42-orbit"
ACCOUNT = "acct-204861"
API_KEY = "test-provider-key-0123456789"
NEW_KEY = "fresh-key-0987654321abc"
SECRETS = (DB_PASS, SERVICE_TOKEN, GITHUB_TOKEN, YML_PLAIN, ACCOUNT, API_KEY, NEW_KEY)
PLACEHOLDER = re.compile(r"<<secret:[0-9a-f]{10}>>")


def forms(value: str) -> list[bytes]:
    """The shapes a value could take in a request body: raw, JSON-escaped, and base64 starting
    at each of the three byte offsets (the groups of four made of its bytes alone)."""
    raw = value.encode()
    shapes = [
        raw,
        json.dumps(value)[1:-1].encode(),
        base64.b64encode(raw),
        base64.b64encode(raw).rstrip(b"="),
    ]
    for pad in (1, 2):
        padded = b"\0" * pad + raw
        shapes.append(base64.b64encode(padded[: len(padded) // 3 * 3])[4:])
    return shapes


def last_tool_text(request: RecordedRequest) -> str:
    messages = request.body["messages"]
    return str(messages[-1].get("content"))


def write_config(request: RecordedRequest) -> Scripted:
    """The model writes the password it was shown (a placeholder) and the account (a stand-in)."""
    seen = json.dumps(request.body)
    password = re.search(r"DB_PASS=(<<secret:[0-9a-f]{10}>>)", seen)
    account = re.search(r"account (\*+)", seen)
    assert password is not None and account is not None, "the model must see placeholders"
    content = f"[db]\npassword={password.group(1)}\naccount={account.group(1)}\n"
    return Scripted(
        text="Writing the config.",
        tool_calls=[ToolCallSpec("write", {"path": "config.ini", "content": content})],
    )


def test_no_secret_reaches_the_provider(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"DB_PASS={DB_PASS}\nDEBUG=1\n")
    (project / ".env.example").write_text("DB_PASS=example-password-here\n")  # not a secret
    (project / "token.txt").write_text(f"deploy with {GITHUB_TOKEN}\n")
    (project / "notes.txt").write_text(f"the {YML_PLAIN}; account {ACCOUNT}\n")
    (agent_dir / "settings.json").write_text(json.dumps({"secrets": {"enabled": True}}))
    (agent_dir / "secrets.yml").write_text(
        f'- type: plain\n  content: "{YML_PLAIN}"\n'
        "- type: regex\n  content: 'acct-[0-9]{6}'\n  mode: replace\n"
    )
    replies = [
        Scripted(tool_calls=[ToolCallSpec("read", {"path": ".env"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "env"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "cat token.txt notes.txt"})]),
        Scripted(
            tool_calls=[ToolCallSpec("bash", {"command": "base64 -w0 .env; echo; printenv | base64 -w0"})]
        ),
        # a secret written into .env during the run is hidden from the next request on
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": f"echo PAYMENT_API_KEY={NEW_KEY} >> .env"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "cat .env"})]),
        write_config,
        Scripted(text="Done: config.ini is written."),
    ]
    with ModelServer(*replies) as server:
        document = server.models_json(api_key=API_KEY)
        (agent_dir / "models.json").write_text(json.dumps(document))
        env = {**os.environ, "SERVICE_API_TOKEN": SERVICE_TOKEN}  # DB_PASS is only in .env
        done = subprocess.run(
            [SCRIPT, "--provider", "test", "--model", "m", "-p", "set up the config"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        requests = list(server.requests)
    assert len(requests) == 8
    sent = b"\n".join(request.raw_body for request in requests)
    for secret in SECRETS:
        for form in forms(secret):
            assert form not in sent, f"{secret!r} left the machine as {form!r}"
    # the model did see the data, with placeholders and stand-ins in the secrets' places
    assert b"DB_PASS=<<secret:" in sent and b"DEBUG=1" in sent
    assert b"PAYMENT_API_KEY=<<secret:" in requests[6].raw_body  # the .env written mid-run
    assert b"SERVICE_API_TOKEN=<<secret:" in sent  # from `env`
    assert b"deploy with <<secret:" in sent  # the built-in GitHub pattern
    assert b"account ******" in sent  # replace mode: a stand-in of the same length
    config = (project / "config.ini").read_text()
    assert f"password={DB_PASS}\n" in config  # the placeholder became the real value for the tool
    assert "account=******" in config and ACCOUNT not in config  # replaced values never come back
    # the session keeps what the user and the tools really saw, and the model's own words
    session = next((agent_dir / "sessions").rglob("*.jsonl")).read_text()
    assert DB_PASS in session and PLACEHOLDER.search(session)


def test_an_exported_page_hides_secrets_unless_asked(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.session import SessionManager
    from tests.support.builders import assistant, user

    project = tmp_path / "project"
    project.mkdir()
    manager = SessionManager.create(str(project), tmp_path / "sessions")
    manager.append_message(user(f"my key is {API_KEY} and the token {GITHUB_TOKEN}"))
    manager.append_label_change(manager.append_message(assistant(f"noted {API_KEY}")), f"key {API_KEY}")
    manager.close()
    assert manager.session_file is not None
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "p": {
                        "baseUrl": "http://127.0.0.1:9",
                        "api": "openai-completions",
                        "apiKey": API_KEY,
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )

    def export(*flags: str) -> str:
        done = subprocess.run(
            [SCRIPT, "--export", str(manager.session_file), "page.html", *flags],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return (project / "page.html").read_text()

    hidden = export()
    assert API_KEY not in hidden and re.search(r"\\u003c\\u003csecret:[0-9a-f]{10}>>", hidden)
    assert GITHUB_TOKEN in hidden  # the setting is off: only the keys pi-tui knows are hidden
    (agent_dir / "settings.json").write_text(json.dumps({"secrets": {"enabled": True}}))
    hidden = export()
    assert API_KEY not in hidden and GITHUB_TOKEN not in hidden
    shown = export("--with-secrets")
    assert API_KEY in shown and GITHUB_TOKEN in shown
