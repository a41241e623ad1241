"""The MCP configuration layer on real mcp.json files: which files are read and in which order,
project overrides, the trust gate, pi's validation rules (each bad entry reported once, the rest
kept), codemode read as deferred, value resolution, per-tool exposure, and edits that keep the
rest of the user's file."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.mcp.config import (
    CODEMODE_NOTE,
    McpConfigError,
    load_mcp_config,
    resolved,
    tool_exposure_for,
)
from pi_tui.mcp.config_edit import add_server, indent_unit, remove_server, set_server_fields
from pi_tui.mcp.model import ConfigSource, McpConfig, ServerConfig

_opened: list[str] | None = None
"""Paths opened while a test watches (the audit hook below); None when nobody watches."""


def _record_opens(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], (str, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)


def write(path: Path, servers: dict[str, Any] | str, **top: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = servers if isinstance(servers, str) else json.dumps({**top, "mcpServers": servers}, indent=2)
    path.write_text(text)
    return path


@pytest.fixture
def folders(tmp_path: Path, agent_dir: Path) -> dict[str, Path]:
    """The five files by scope (the project is ``tmp_path/project``)."""
    project = tmp_path / "project"
    project.mkdir()
    return {
        "pi-user": tmp_path / "pi-agent" / "mcp.json",
        "user": agent_dir / "mcp.json",
        "claude-project": project / ".mcp.json",
        "pi-project": project / ".pi" / "mcp.json",
        "project": project / ".agent" / "mcp.json",
        "cwd": project,
    }


def load(folders: dict[str, Path], trusted: bool = True) -> McpConfig:
    return load_mcp_config(folders["cwd"], project_trusted=trusted)


# --- which files, in which order ------------------------------------------------------------------


def test_files_are_read_lowest_first_and_a_later_entry_replaces_an_earlier(folders: dict[str, Path]) -> None:
    scopes = ["pi-user", "user", "claude-project", "pi-project", "project"]
    for rank, scope in enumerate(scopes):
        # "shared" in every file; "only-<scope>" in one each
        servers = {name: {"command": f"{scope}-cmd"} for name in scopes[: rank + 1]}
        servers["shared"] = {"command": f"{scope}-cmd"}
        servers[f"only-{scope}"] = {"url": f"http://127.0.0.1/{scope}"}
        write(folders[scope], servers)
    config = load(folders)
    assert config.problems == []
    assert config.servers["shared"].command == "project-cmd"
    assert config.servers["shared"].source.scope == "project"
    assert config.servers["shared"].source.path == folders["project"]
    for scope in scopes:
        only = config.servers[f"only-{scope}"]
        assert (only.source.scope, only.source.path, only.transport) == (scope, folders[scope], "http")
        # each scope's own name was last replaced by the project file
        assert config.servers[scope].command == "project-cmd"


def test_no_pi_folder_means_no_pi_file(folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    write(folders["pi-user"], {"pi-only": {"command": "x"}})
    monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", "")
    assert load(folders).servers == {}
    explicit = load_mcp_config(folders["cwd"], project_trusted=False, pi_folder=folders["pi-user"].parent)
    assert list(explicit.servers) == ["pi-only"]


def test_an_untrusted_project_file_is_not_even_opened(folders: dict[str, Path]) -> None:
    global _opened
    for scope in ("claude-project", "pi-project", "project"):
        write(folders[scope], {f"from-{scope}": {"command": "evil"}})
    write(folders["user"], {"mine": {"command": "ok"}})
    _opened = []
    try:
        untrusted = load(folders, trusted=False)
        opened_untrusted = list(_opened)
        _opened.clear()
        trusted = load(folders, trusted=True)
        opened_trusted = list(_opened)
    finally:
        _opened = None
    project = str(folders["cwd"])
    assert list(untrusted.servers) == ["mine"]
    assert not [path for path in opened_untrusted if path.startswith(project)]
    # the same call with trust opens all three (the audit hook does see these opens)
    assert {str(folders[s]) for s in ("claude-project", "pi-project", "project")} <= set(opened_trusted)
    assert set(trusted.servers) == {"mine", "from-claude-project", "from-pi-project", "from-project"}


def test_a_fifo_in_place_of_a_file_is_a_problem_not_a_hang(folders: dict[str, Path]) -> None:
    folders["project"].parent.mkdir(parents=True)
    os.mkfifo(folders["project"])
    write(folders["user"], {"mine": {"command": "ok"}})
    config = load(folders)
    assert list(config.servers) == ["mine"]
    assert [(p.path, p.message) for p in config.problems] == [(folders["project"], "not a regular file")]


# --- project overrides -----------------------------------------------------------------------------


def test_a_project_override_changes_only_enabled_and_exposure_and_keeps_credentials(
    folders: dict[str, Path],
) -> None:
    write(
        folders["user"],
        {
            "docs": {
                "url": "https://docs.example/mcp",
                "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                "oauth": {"clientId": "c"},
                "exposure": "direct",
                "timeout": 5,
            }
        },
    )
    write(
        folders["pi-project"],
        {"docs": {"enabled": False, "exposure": "hidden", "toolExposure": {"a": "direct"}}},
    )
    config = load(folders)
    docs = config.servers["docs"]
    assert config.problems == []
    assert (docs.enabled, docs.exposure, docs.tool_exposure) == (False, "hidden", {"a": "direct"})
    assert docs.headers == {"Authorization": "Bearer ${DOCS_TOKEN}"} and docs.oauth == {"clientId": "c"}
    assert docs.url == "https://docs.example/mcp" and docs.timeout == 5
    assert docs.source.scope == "user" and docs.source.path == folders["user"]
    assert docs.override_source is not None and docs.override_source.path == folders["pi-project"]
    # untrusted: no override
    plain = load(folders, trusted=False).servers["docs"]
    assert (plain.enabled, plain.exposure, plain.override_source) == (True, "direct", None)


def test_an_override_without_a_server_or_with_other_keys_is_a_problem(folders: dict[str, Path]) -> None:
    write(folders["user"], {"kept": {"command": "real", "env": {"K": "v"}}})
    write(
        folders["project"],
        {
            "ghost": {"enabled": False},
            "kept": {"enabled": False, "env": {"K": "stolen"}},
            "fine": {"command": "x"},
        },
    )
    config = load(folders)
    assert sorted(config.servers) == ["fine", "kept"]
    kept = config.servers["kept"]
    assert (kept.enabled, kept.env, kept.override_source) == (True, {"K": "v"}, None)
    messages = {p.server: p.message for p in config.problems}
    assert len(config.problems) == 2
    assert "override" in messages["ghost"] and "user-level server" in messages["ghost"]
    assert "can only set enabled, exposure, toolExposure" in messages["kept"]


def test_a_user_file_entry_without_command_or_url_is_invalid_not_an_override(
    folders: dict[str, Path],
) -> None:
    write(folders["pi-user"], {"s": {"command": "a"}})
    write(folders["user"], {"s": {"enabled": False}})
    config = load(folders)
    assert config.servers["s"].enabled is True
    assert [p.server for p in config.problems] == ["s"]
    assert "needs either" in config.problems[0].message


# --- validation --------------------------------------------------------------------------------------

BAD_ENTRIES: list[tuple[str, Any, str]] = [
    ("bad.name", {"command": "x"}, "invalid server name"),
    ("spaced name", {"command": "x"}, "invalid server name"),
    ("notobj", ["command", "x"], "must be an object"),
    (
        "kind",
        {"type": "websocket", "url": "http://h/mcp"},
        'type must be "stdio", "http" or "streamable-http"',
    ),
    ("legacy", {"type": "sse", "url": "http://h/sse"}, "/mcp instead of /sse"),
    ("cmdtype", {"command": ["npx", "x"]}, "command must be a string"),
    ("cmdempty", {"command": ""}, "command must be a string"),
    ("args1", {"command": "x", "args": "-y pkg"}, "args must be an array of strings"),
    ("args2", {"command": "x", "args": ["-p", 8080]}, "args must be an array of strings"),
    ("env", {"command": "x", "env": {"PORT": 8080}}, "env must map names to strings"),
    ("cwd", {"command": "x", "cwd": 3}, "cwd must be a string"),
    ("headers", {"url": "http://h/mcp", "headers": ["A: b"]}, "headers must map names to strings"),
    ("timeout0", {"command": "x", "timeout": 0}, "timeout must be a positive number"),
    ("timeouts", {"command": "x", "timeout": "30"}, "timeout must be a positive number"),
    ("timeoutb", {"command": "x", "timeout": True}, "timeout must be a positive number"),
    ("enabled", {"command": "x", "enabled": "no"}, "enabled must be true or false"),
    ("exposure", {"command": "x", "exposure": "visible"}, "exposure must be one of"),
    ("toolexp1", {"command": "x", "toolExposure": ["a"]}, "toolExposure must map tool names"),
    ("toolexp2", {"command": "x", "toolExposure": {"a": "shown"}}, 'toolExposure "a" must be one of'),
    ("descr", {"command": "x", "description": 7}, "description must be a string"),
    ("url", {"url": "ftp://h/mcp"}, "url must be an http or https URL"),
    ("stdio-url", {"type": "stdio", "url": "http://h/mcp"}, 'a stdio server needs "command"'),
    ("http-cmd", {"type": "http", "command": "x"}, 'an HTTP server needs "url"'),
    ("nothing", {"description": "d"}, 'needs either "command" (stdio) or "url"'),
    ("oauth", {"url": "http://h/mcp", "oauth": "yes"}, "oauth must be an object"),
    ("oauthid", {"url": "http://h/mcp", "oauth": {"clientId": 1}}, "oauth.clientId must be a string"),
    ("oauthport", {"url": "http://h/mcp", "oauth": {"callbackPort": 70000}}, "oauth.callbackPort"),
    (
        "oauthurl",
        {"url": "http://h/mcp", "oauth": {"callbackUrl": "https://127.0.0.1/cb"}},
        "oauth.callbackUrl",
    ),
    (
        "oauthports",
        {
            "url": "http://h/mcp",
            "oauth": {"callbackUrl": "http://localhost:1234/callback", "callbackPort": 99},
        },
        "different ports",
    ),
    ("oauthname", {"url": "http://h/mcp", "oauth": {"clientName": " "}}, "oauth.clientName"),
    (
        "oauthreg",
        {"url": "http://h/mcp", "oauth": {"clientRegistration": "manual"}},
        "oauth.clientRegistration",
    ),
    (
        "cimd",
        {"url": "http://h/mcp", "oauth": {"clientRegistration": "cimd", "clientId": "c"}},
        "cannot be combined with oauth.clientId",
    ),
    (
        "cimdpath",
        {
            "url": "http://h/mcp",
            "oauth": {"clientRegistration": "cimd", "callbackUrl": "http://localhost/cb"},
        },
        "with path /callback",
    ),
    (
        "metadata",
        {"url": "http://h/mcp", "oauth": {"authServerMetadataUrl": "http://auth.example/.well-known/x"}},
        "oauth.authServerMetadataUrl must be an https URL",
    ),
]


@pytest.mark.parametrize(("name", "entry", "expected"), BAD_ENTRIES, ids=[case[0] for case in BAD_ENTRIES])
def test_each_invalid_entry_is_one_problem_and_the_others_connect(
    folders: dict[str, Path], name: str, entry: Any, expected: str
) -> None:
    write(folders["user"], {"before": {"command": "a"}, name: entry, "after": {"url": "https://h/mcp"}})
    config = load(folders)
    assert list(config.servers) == ["before", "after"]
    assert len(config.problems) == 1, config.problems
    problem = config.problems[0]
    assert (problem.path, problem.server) == (folders["user"], name)
    assert expected in problem.message, problem.message
    assert "\n" not in problem.line() and str(folders["user"]) in problem.line()


def test_valid_entries_of_every_kind_are_accepted(folders: dict[str, Path]) -> None:
    write(
        folders["user"],
        {
            "stdio": {"type": "stdio", "command": "srv", "args": ["a"], "env": {"A": "b"}, "cwd": "sub"},
            "http": {"type": "http", "url": "https://h/mcp"},
            "streamable": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "timeout": 2.5},
            "both": {"command": "ignored", "url": "https://h/mcp"},
            "oauth": {
                "url": "https://h/mcp",
                "oauth": {
                    "clientId": "id",
                    "clientSecret": "${S}",
                    "callbackPort": 8765,
                    "callbackUrl": "http://[::1]:8765/cb",
                    "scope": "a b",
                    "clientName": "Claude Code",
                    "clientRegistration": "dcr",
                    "authServerMetadataUrl": "http://localhost:9/.well-known/oauth-authorization-server",
                },
            },
            "cimd": {
                "url": "https://h/mcp",
                "oauth": {"clientRegistration": "cimd", "callbackUrl": "http://127.0.0.1/callback"},
            },
            "Extra_1-x": {"command": "x", "unknownKey": {"kept": True}},
        },
    )
    config = load(folders)
    assert config.problems == []
    servers = config.servers
    assert servers["stdio"].transport == "stdio" and servers["stdio"].args == ["a"]
    assert servers["stdio"].cwd == "sub" and servers["stdio"].env == {"A": "b"}
    assert [servers[n].transport for n in ("http", "streamable", "both")] == ["http"] * 3
    assert servers["streamable"].timeout == 2.5 and servers["http"].timeout == 60
    assert servers["oauth"].oauth is not None and servers["oauth"].oauth["callbackPort"] == 8765
    assert servers["Extra_1-x"].raw["unknownKey"] == {"kept": True}


def test_names_differing_only_in_dash_and_underscore_are_one_server(folders: dict[str, Path]) -> None:
    write(folders["user"], {"dev-radius": {"command": "a"}})
    write(folders["project"], {"dev_radius": {"command": "b"}, "dev-radius": {"command": "c"}})
    config = load(folders)
    assert list(config.servers) == ["dev-radius"]
    assert config.servers["dev-radius"].command == "c"
    assert [(p.server, p.path) for p in config.problems] == [("dev_radius", folders["project"])]
    assert 'conflicts with server "dev-radius"' in config.problems[0].message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"mcpServers": {"a": {"command": "x"},}}', "invalid JSON at line 1"),
        ("// a comment\n{}", "invalid JSON at line 1"),
        ('[{"mcpServers": {}}]', 'expected an object with an "mcpServers" object'),
        ('{"mcpServers": ["a"]}', 'expected an object with an "mcpServers" object'),
    ],
)
def test_a_broken_file_is_one_problem_and_the_other_files_still_count(
    folders: dict[str, Path], text: str, expected: str
) -> None:
    write(folders["user"], text)
    write(folders["project"], {"p": {"command": "x"}})
    config = load(folders)
    assert list(config.servers) == ["p"]
    assert len(config.problems) == 1 and config.problems[0].server is None
    assert config.problems[0].path == folders["user"] and expected in config.problems[0].message


def test_bom_empty_files_and_files_without_mcpservers_are_fine(folders: dict[str, Path]) -> None:
    folders["user"].write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"a": {"command": "x"}}}).encode()
    )
    write(folders["pi-user"], "")
    write(folders["project"], '{"autoEnableCodemode": false}')
    config = load(folders)
    assert config.problems == [] and list(config.servers) == ["a"]


# --- exposure ----------------------------------------------------------------------------------------


def test_codemode_is_read_as_deferred_with_one_note(folders: dict[str, Path]) -> None:
    write(
        folders["user"],
        {
            "plain": {"command": "x"},
            "cm": {"command": "x", "exposure": "codemode"},
            "alias": {"command": "x", "exposure": "codemode-deferred"},
            "tools": {"command": "x", "exposure": "direct", "toolExposure": {"get_*": "codemode"}},
            "hid": {"command": "x", "exposure": "hidden"},
        },
    )
    config = load(folders)
    servers = config.servers
    assert config.notes == [CODEMODE_NOTE] and "tool_search" in CODEMODE_NOTE
    assert (servers["plain"].exposure, servers["plain"].written_exposure) == ("deferred", None)
    assert (servers["cm"].exposure, servers["cm"].written_exposure) == ("deferred", "codemode")
    assert (servers["alias"].exposure, servers["alias"].written_exposure) == ("deferred", "codemode-deferred")
    assert servers["hid"].exposure == "hidden" and servers["tools"].exposure == "direct"
    assert tool_exposure_for(servers["tools"], "get_user") == "deferred"


def test_no_note_without_an_explicit_codemode(folders: dict[str, Path]) -> None:
    write(folders["user"], {"a": {"command": "x"}, "b": {"url": "https://h", "exposure": "deferred"}})
    assert load(folders).notes == []


def test_tool_exposure_exact_name_then_first_pattern_then_server(folders: dict[str, Path]) -> None:
    write(
        folders["user"],
        {
            "gh": {
                "url": "https://h/mcp",
                "exposure": "hidden",
                "toolExposure": {
                    "get_*": "direct",
                    "get_secret*": "hidden",
                    "get_secret_note": "codemode",
                    "*_issue": "deferred",
                    "a.b": "direct",
                },
            }
        },
    )
    gh = load(folders).servers["gh"]
    assert tool_exposure_for(gh, "get_secret_note") == "deferred"  # exact wins over earlier patterns
    assert tool_exposure_for(gh, "get_secret_key") == "direct"  # first pattern in file order
    assert tool_exposure_for(gh, "create_issue") == "deferred"
    assert tool_exposure_for(gh, "aXb") == "hidden"  # "." is a character, not a wildcard
    assert tool_exposure_for(gh, "a.b") == "direct"
    assert tool_exposure_for(gh, "delete_repo") == "hidden"  # the server's


# --- resolving values --------------------------------------------------------------------------------


def stdio_server(**fields: Any) -> ServerConfig:
    from pi_tui.mcp.model import ConfigSource

    return ServerConfig(name="tools", transport="stdio", source=ConfigSource("user"), command="srv", **fields)


def test_env_values_fill_variables_and_run_whole_value_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLS_KEY", "k-123")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    counter = tmp_path / "n"
    server = stdio_server(
        env={
            "KEY": "${TOOLS_KEY}",
            "MIXED": "pre-$TOOLS_KEY-post",
            "LITERAL": "HOME",  # pi 1.x: a bare word is text, not a variable's name
            "CMD": "!printf ' from-a-command \\n'",
            "COUNT": f"!echo x >> {counter}; wc -l < {counter}",
            "ESCAPED": "$$5 and $!",
        }
    )
    first = resolved(server, tmp_path).env
    assert first == {
        "KEY": "k-123",
        "MIXED": "pre-k-123-post",
        "LITERAL": "HOME",
        "CMD": "from-a-command",
        "COUNT": "1",
        "ESCAPED": "$5 and !",
    }
    assert resolved(server, tmp_path).env["COUNT"] == "2"  # run again on every connect


def test_headers_and_oauth_strings_are_resolved_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_tui.mcp.model import ConfigSource

    monkeypatch.setenv("SECRET", "s3")
    server = ServerConfig(
        name="docs",
        transport="http",
        source=ConfigSource("user"),
        url="https://h/mcp",
        headers={"Authorization": "!echo Bearer tok-9", "X-Plain": "v"},
        oauth={"clientId": "id", "clientSecret": "${SECRET}", "callbackPort": 8765},
    )
    ready = resolved(server, tmp_path)
    assert ready.headers == {"Authorization": "Bearer tok-9", "X-Plain": "v"}
    assert ready.oauth == {"clientId": "id", "clientSecret": "s3", "callbackPort": 8765}
    assert ready.url == "https://h/mcp" and ready.transport == "http"


def test_a_failing_command_or_unset_variable_is_one_line_naming_server_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(McpConfigError) as failed:
        resolved(stdio_server(env={"TOKEN": "!echo hunter2-secret; exit 3"}), tmp_path)
    message = str(failed.value)
    assert 'MCP server "tools" env "TOKEN"' in message and "exit code 3" in message
    assert "\n" not in message
    assert "hunter2-secret" not in message  # neither the command as written nor its output
    with pytest.raises(McpConfigError, match=r'MCP server "tools" env "T": .*NOT_SET_ANYWHERE not set'):
        resolved(stdio_server(env={"T": "${NOT_SET_ANYWHERE}"}), tmp_path)


def test_a_failing_command_never_shows_what_it_printed(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError) as failed:
        resolved(stdio_server(env={"TOKEN": "!printf 'ghp_value_printed'; false"}), tmp_path)
    assert "ghp_value_printed" not in str(failed.value)


def test_a_failing_command_s_stderr_and_text_stay_out_of_the_line(tmp_path: Path) -> None:
    """docs/mcp.md: one line naming the server and the key, never the value. A token command's
    stderr (a ``set -x`` trace, a tool quoting its input) is where a secret would show."""
    server = ServerConfig(
        name="varsfail",
        transport="http",
        source=ConfigSource("user", tmp_path / "mcp.json"),
        url="https://h/mcp",
        headers={"Authorization": "!echo 'Bearer tok-stderr-5e3a' >&2; exit 3"},
    )
    with pytest.raises(McpConfigError) as failed:
        resolved(server, tmp_path)
    assert str(failed.value) == (
        'MCP server "varsfail" header "Authorization": the command failed with exit code 3 '
        "(its output is not shown)"
    )
    with pytest.raises(McpConfigError) as silent:
        resolved(stdio_server(env={"PE": "!echo ok >&2"}), tmp_path)
    assert str(silent.value) == 'MCP server "tools" env "PE": the command printed nothing'


def test_home_and_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    session = tmp_path / "session"
    server = stdio_server(args=["~/data", "x~/y", "~"], cwd="../sub/./dir")
    server.command = "~/bin/srv"
    ready = resolved(server, session)
    assert ready.command == str(home / "bin" / "srv")
    assert ready.args == [str(home / "data"), "x~/y", str(home)]
    assert ready.cwd == tmp_path / "sub" / "dir"
    assert resolved(stdio_server(cwd="~/w"), session).cwd == home / "w"
    assert resolved(stdio_server(cwd="/abs/w"), session).cwd == Path("/abs/w")
    assert resolved(stdio_server(), session).cwd == session


# --- editing -----------------------------------------------------------------------------------------

USER_TEXT = """{
  "theme": "dark",
  "mcpServers": {
    "zeta": {
      "command": "z",
      "enabled": false,
      "env": {"TOKEN": "${Z}"}
    },
    "alpha": {
      "url": "https://a/mcp"
    }
  },
  "autoEnableCodemode": true
}
"""


def test_set_fields_changes_one_entry_and_keeps_the_rest_of_the_file(folders: dict[str, Path]) -> None:
    path = folders["user"]
    path.write_text(USER_TEXT)
    path.chmod(0o640)
    config = load(folders)
    written = set_server_fields(config.servers["zeta"], {"enabled": True, "exposure": "direct"})
    assert written == path
    data = json.loads(path.read_text())
    assert list(data) == ["theme", "mcpServers", "autoEnableCodemode"]
    assert list(data["mcpServers"]) == ["zeta", "alpha"]
    assert data["mcpServers"]["zeta"] == {"command": "z", "env": {"TOKEN": "${Z}"}, "exposure": "direct"}
    assert data["mcpServers"]["alpha"] == {"url": "https://a/mcp"}
    assert path.read_text().startswith('{\n  "theme": "dark",\n  "mcpServers": {\n    "zeta"')
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    set_server_fields(load(folders).servers["alpha"], {"enabled": False})
    assert json.loads(path.read_text())["mcpServers"]["alpha"] == {"url": "https://a/mcp", "enabled": False}
    after = load(folders).servers
    assert (after["zeta"].enabled, after["zeta"].exposure, after["alpha"].enabled) == (True, "direct", False)


def test_a_change_in_this_project_writes_an_override_and_later_changes_go_there(
    folders: dict[str, Path],
) -> None:
    folders["user"].write_text(USER_TEXT)
    before = folders["user"].read_text()
    alpha = load(folders).servers["alpha"]
    written = set_server_fields(alpha, {"enabled": False}, in_project=True, cwd=folders["cwd"])
    assert written == folders["project"]
    assert json.loads(written.read_text()) == {"mcpServers": {"alpha": {"enabled": False}}}
    overridden = load(folders).servers["alpha"]
    assert overridden.enabled is False and overridden.override_source is not None
    # a later change (even without in_project) goes to the override, which keeps explicit values
    assert set_server_fields(overridden, {"enabled": True, "exposure": "codemode"}) == folders["project"]
    assert json.loads(written.read_text()) == {
        "mcpServers": {"alpha": {"enabled": True, "exposure": "codemode"}}
    }
    assert folders["user"].read_text() == before
    assert stat.S_IMODE(written.stat().st_mode) == 0o600


def test_a_broken_file_is_never_rewritten(folders: dict[str, Path]) -> None:
    folders["user"].write_text(USER_TEXT)
    zeta = load(folders).servers["zeta"]
    broken = USER_TEXT.replace('"theme": "dark",', '"theme": "dark",,')
    folders["user"].write_text(broken)
    with pytest.raises(McpConfigError, match="invalid JSON at line 2"):
        set_server_fields(zeta, {"enabled": True})
    with pytest.raises(McpConfigError, match="invalid JSON"):
        add_server(folders["user"], "new", {"command": "x"})
    with pytest.raises(McpConfigError, match="invalid JSON"):
        remove_server(folders["user"], "zeta")
    assert folders["user"].read_text() == broken


def test_add_replaces_in_place_and_remove_keeps_the_rest(folders: dict[str, Path], tmp_path: Path) -> None:
    path = folders["user"]
    path.write_text(USER_TEXT.replace("  ", "\t"))
    assert add_server(path, "zeta", {"url": "https://z/mcp"}) is True
    assert add_server(path, "new", {"command": "n"}) is False
    data = json.loads(path.read_text())
    assert list(data["mcpServers"]) == ["zeta", "alpha", "new"]
    assert data["mcpServers"]["zeta"] == {"url": "https://z/mcp"}
    assert '\n\t"theme"' in path.read_text()  # the file's own indentation
    assert remove_server(path, "alpha") is True
    unchanged = path.read_text()
    assert remove_server(path, "alpha") is False
    assert path.read_text() == unchanged
    assert list(json.loads(unchanged)) == ["theme", "mcpServers", "autoEnableCodemode"]
    assert remove_server(tmp_path / "missing.json", "x") is False
    assert not (tmp_path / "missing.json").exists()


def test_a_symlinked_file_stays_a_symlink(folders: dict[str, Path], tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    write(real, {"a": {"command": "x"}})
    folders["user"].symlink_to(real)
    add_server(folders["user"], "b", {"command": "y"})
    assert folders["user"].is_symlink()
    assert list(json.loads(real.read_text())["mcpServers"]) == ["a", "b"]


def test_set_fields_refuses_what_it_cannot_save(folders: dict[str, Path]) -> None:
    write(folders["user"], {"a": {"command": "x"}})
    server = load(folders).servers["a"]
    with pytest.raises(ValueError, match="only enabled, exposure"):
        set_server_fields(server, {"command": "y"})
    with pytest.raises(ValueError, match="exposure must be one of"):
        set_server_fields(server, {"exposure": "visible"})
    write(folders["user"], {"other": {"command": "x"}})
    with pytest.raises(McpConfigError, match='does not define MCP server "a"'):
        set_server_fields(server, {"enabled": False})


COMPACT_PROJECT = """{"mcpServers": {
 "other": {"command": "o", "args": ["-y", "other-server"], "env": {"A": "1"}},
 "alpha": {"exposure": "direct"}}}
"""


def test_a_compact_file_with_a_stray_indented_line_is_written_with_two_spaces(
    folders: dict[str, Path],
) -> None:
    """ "Disable in this project" on a three-line compact .agent/mcp.json: no indentation to keep,
    so the change writes two-space JSON (one space guessed from the stray line spread over 25)."""
    folders["user"].write_text(USER_TEXT)
    folders["project"].parent.mkdir(parents=True)
    folders["project"].write_text(COMPACT_PROJECT)
    alpha = load(folders).servers["alpha"]
    written = set_server_fields(alpha, {"enabled": False}, in_project=True, cwd=folders["cwd"])
    data = json.loads(COMPACT_PROJECT)
    data["mcpServers"]["alpha"]["enabled"] = False
    assert written.read_text() == json.dumps(data, indent=2) + "\n"
    assert indent_unit('{"mcpServers": {"a": {"command": "x"}}}') == "  "  # one line


@pytest.mark.parametrize("unit", ["    ", "\t", " ", "   "])
def test_a_file_with_a_clear_indentation_keeps_it(folders: dict[str, Path], unit: str) -> None:
    text = USER_TEXT.replace("  ", unit)
    folders["user"].write_text(text)
    assert indent_unit(text) == unit
    add_server(folders["user"], "new", {"command": "n", "args": ["a"]})
    data = json.loads(text)
    data["mcpServers"]["new"] = {"command": "n", "args": ["a"]}
    assert folders["user"].read_text() == json.dumps(data, indent=unit) + "\n"


def test_indentation_is_read_outside_strings_and_a_stray_line_does_not_outvote_the_file() -> None:
    odd = '{\n    "mcpServers": {\n        "a": {"command": "say \\"{[\\"",\n        "args": []},\n'
    odd += ' "b": {"command": "x"}\n    }\n}\n'
    assert indent_unit(odd) == "    "  # the brackets in the string count for nothing; " b" is one line
    assert indent_unit('{\n  "mcpServers": {}\n}\n') == "  "
    assert indent_unit('{\n    "mcpServers": {}\n}\n') == "  "  # one depth only: not clear enough


def test_a_byte_order_mark_is_kept(folders: dict[str, Path]) -> None:
    path = folders["user"]
    path.write_text("\ufeff" + USER_TEXT, encoding="utf-8")
    set_server_fields(load(folders).servers["zeta"], {"exposure": "hidden"})
    assert path.read_bytes().startswith(b'\xef\xbb\xbf{\n  "theme"')
    assert load(folders).servers["zeta"].exposure == "hidden"
    plain = folders["project"]
    add_server(plain, "p", {"command": "p"})
    assert plain.read_bytes().startswith(b"{")


def test_claude_codes_mcp_json_gets_its_own_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's ``.mcp.json`` expands ``${VAR}`` and ``${VAR:-default}`` in command, args,
    url, env and headers; its values are final (no pi ``!command``, no second ``$`` pass). pi's
    files keep pi's rules: ``${VAR:-x}`` is not theirs."""
    monkeypatch.setenv("TOOLS_HOME", "/opt/tools")
    monkeypatch.setenv("TOKEN_WITH_DOLLAR", "a$HOME-b")
    monkeypatch.delenv("UNSET_V", raising=False)
    claude = ConfigSource("claude-project", tmp_path / ".mcp.json")
    server = ServerConfig(
        name="c",
        transport="stdio",
        source=claude,
        command="${TOOLS_HOME}/bin/server",
        args=["--root", "${UNSET_V:-/srv}", "${TOOLS_HOME}"],
        env={"X": "${UNSET_V:-fallback}", "T": "${TOKEN_WITH_DOLLAR}", "C": "!echo not run"},
    )
    ready = resolved(server, tmp_path)
    assert ready.command == "/opt/tools/bin/server"
    assert ready.args == ["--root", "/srv", "/opt/tools"]
    assert ready.env == {"X": "fallback", "T": "a$HOME-b", "C": "!echo not run"}
    web = ServerConfig(
        name="w",
        transport="http",
        source=claude,
        url="https://${UNSET_V:-h}/mcp",
        headers={"A": "${TOOLS_HOME}"},
    )
    assert resolved(web, tmp_path).url == "https://h/mcp" and resolved(web, tmp_path).headers == {
        "A": "/opt/tools"
    }
    with pytest.raises(
        McpConfigError, match='MCP server "c" args\\[0\\]: environment variable UNSET_V is not set'
    ):
        resolved(
            ServerConfig(name="c", transport="stdio", source=claude, command="x", args=["${UNSET_V}"]),
            tmp_path,
        )
    pis = ServerConfig(
        name="p", transport="stdio", source=ConfigSource("user"), command="x", args=["${TOOLS_HOME}"]
    )
    assert resolved(pis, tmp_path).args == ["${TOOLS_HOME}"]  # pi expands env and headers only
