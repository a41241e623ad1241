"""Reading the ``mcp.json`` files: which servers a session has, from which file, and what was wrong.

The files are pi 1.x's, so one ``mcp.json`` serves pi and pi-tui. Lowest precedence first:

1. pi's user file ``<pi agent dir>/mcp.json`` (scope ``pi-user``), read beneath ours as pi's
   other files are (:mod:`pi_tui.config.pi_folder`);
2. pi-tui's ``<agent dir>/mcp.json`` (``user``);
3. only in a trusted project: Claude Code's ``<cwd>/.mcp.json`` (``claude-project``), pi's
   ``<cwd>/.pi/mcp.json`` (``pi-project``), ours ``<cwd>/.agent/mcp.json`` (``project``).

An untrusted project's files are not even opened: a server a repository names could run any
command. A later file's entry replaces an earlier one of the same name. A project entry without
``command``, ``url`` or ``type`` is an *override*: it sets only ``enabled``, ``exposure`` and
``toolExposure`` of the server defined before it, which keeps its ``env``, ``headers`` and
``oauth`` (a project can turn the user's server off, never redirect its credentials).

Validation follows pi's "Configuration rules" (pi's docs/mcp.md and its pi-mcp package): each
invalid entry is one :class:`ConfigProblem` and is skipped, and the other servers are unaffected.
A file that is not JSON, or whose ``mcpServers`` is not an object, is one problem for the file.
Files are read as pi reads them: strict JSON (pi has no comments in mcp.json), a BOM is fine.

Values are kept as written: ``${VAR}`` and ``!command`` run only in :func:`resolved`, when a
server connects, so loading a configuration never runs anything.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from pi_tui.mcp.model import (
    DEFAULT_TIMEOUT,
    PI_EXPOSURES,
    ConfigProblem,
    ConfigSource,
    Exposure,
    McpConfig,
    Scope,
    ServerConfig,
    Transport,
)

CONFIG_FILE = "mcp.json"
OVERRIDE_KEYS: tuple[str, ...] = ("enabled", "exposure", "toolExposure")
"""What a project entry without ``command``, ``url`` or ``type`` may set (pi's list)."""
PROJECT_SCOPES: tuple[Scope, ...] = ("claude-project", "pi-project", "project")
TYPES: tuple[str, ...] = ("stdio", "http", "streamable-http")
REGISTRATIONS: tuple[str, ...] = ("auto", "dcr", "cimd")
OAUTH_KEYS: tuple[str, ...] = (
    "clientId",
    "clientSecret",
    "callbackPort",
    "callbackUrl",
    "scope",
    "clientName",
    "clientRegistration",
    "authServerMetadataUrl",
)
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
_UNSPECIFIED: Any = object()
CODEMODE_NOTE = (
    'pi\'s "codemode" exposure is read as "deferred": pi-tui has no codemode, so those tools '
    "are found through tool_search"
)


class McpConfigError(Exception):
    """One line naming the server and the value that could not be used (never a secret)."""


class McpFileError(McpConfigError):
    """An mcp.json that cannot be used at all: not readable, not JSON, not the right shape.
    ``reason`` is the line without the file's name (a :class:`ConfigProblem` names it)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def is_override(entry: dict[str, Any]) -> bool:
    """An entry that overrides a server defined before it instead of defining one (pi's rule)."""
    return "command" not in entry and "url" not in entry and "type" not in entry


def namespace(name: str) -> str:
    """Names that differ only in ``-`` and ``_`` share tool names, so they count as one server."""
    return name.replace("-", "_")


def effective_exposure(word: str | None) -> Exposure:
    """pi's exposure word as pi-tui applies it: codemode (and its alias) and absence -> deferred."""
    if word in ("direct", "hidden"):
        return cast(Exposure, word)
    return "deferred"


def config_files(
    cwd: Path,
    *,
    project_trusted: bool,
    agent_folder: Path | None = None,
    pi_folder: Path | None = _UNSPECIFIED,
) -> list[tuple[Scope, Path]]:
    """The files :func:`load_mcp_config` reads, lowest precedence first."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.pi_folder import pi_agent_dir

    ours = agent_folder if agent_folder is not None else agent_dir()
    pis = pi_agent_dir() if pi_folder is _UNSPECIFIED else pi_folder
    files: list[tuple[Scope, Path]] = []
    if pis is not None:
        files.append(("pi-user", pis / CONFIG_FILE))
    files.append(("user", ours / CONFIG_FILE))
    if project_trusted:
        files.extend(project_files(cwd))
    return files


def project_files(cwd: Path) -> list[tuple[Scope, Path]]:
    """The project's three mcp.json files (Claude Code's, pi's, ours), lowest precedence first."""
    return [
        ("claude-project", cwd / ".mcp.json"),
        ("pi-project", cwd / ".pi" / CONFIG_FILE),
        ("project", cwd / ".agent" / CONFIG_FILE),
    ]


def read_servers_object(path: Path) -> dict[str, Any] | None:
    """The ``mcpServers`` object of ``path`` ({} when the file or the key is absent, or the file
    is empty); None when the file does not exist. Raises :class:`McpFileError` with one line
    for a file that is not JSON or not shaped ``{"mcpServers": {...}}``."""
    document = read_document(path)
    if document is None:
        return None
    servers = document.get("mcpServers", {})
    return cast(dict[str, Any], servers)


def read_document(path: Path) -> dict[str, Any] | None:
    """The whole JSON object of an mcp.json (None when missing; {} when empty). Raises
    :class:`McpFileError` for text that is not a JSON object with an object ``mcpServers``."""
    try:
        if not path.is_file():
            if path.exists():
                raise McpFileError(path, "not a regular file")
            return None
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise McpFileError(path, "not UTF-8 text") from None
    except OSError as error:
        raise McpFileError(path, f"cannot read: {error.strerror or error}") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise McpFileError(
            path, f"invalid JSON at line {error.lineno} column {error.colno} ({error.msg})"
        ) from None
    except RecursionError:
        raise McpFileError(path, "invalid JSON (nested too deeply)") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers", {}), dict):
        raise McpFileError(path, 'expected an object with an "mcpServers" object')
    return document


def load_mcp_config(
    cwd: Path,
    *,
    project_trusted: bool,
    agent_folder: Path | None = None,
    pi_folder: Path | None = _UNSPECIFIED,
) -> McpConfig:
    """Every server of the session, merged from the files in precedence order, with the problems.

    ``agent_folder`` defaults to :func:`pi_tui.config.paths.agent_dir`, ``pi_folder`` to
    :func:`pi_tui.config.pi_folder.pi_agent_dir` (None: no pi folder). Project files are read
    only when ``project_trusted``; otherwise they are not opened at all.
    """
    config = McpConfig()
    files = config_files(cwd, project_trusted=project_trusted, agent_folder=agent_folder, pi_folder=pi_folder)
    for scope, path in files:
        try:
            servers = read_servers_object(path)
        except McpFileError as error:
            config.problems.append(ConfigProblem(path, None, error.reason))
            continue
        if servers is None:
            continue
        source = ConfigSource(scope, path)
        for name, entry in servers.items():
            _merge_entry(config, source, str(name), entry)
    return config


def _merge_entry(config: McpConfig, source: ConfigSource, name: str, entry: Any) -> None:
    """Validate one entry of ``source`` and put it into ``config`` (or record its problem)."""

    def problem(message: str) -> None:
        config.problems.append(ConfigProblem(source.path, name, message))

    if source.scope in PROJECT_SCOPES and isinstance(entry, dict) and is_override(entry):
        base = config.servers.get(name)
        extra = [key for key in entry if key not in OVERRIDE_KEYS]
        if base is None:
            problem('needs "command" or "url", or a user-level server of this name to override')
        elif extra:
            problem(f"an override can only set {', '.join(OVERRIDE_KEYS)} (not {', '.join(map(str, extra))})")
        elif (error := _check_exposures(entry)) or (error := _check_enabled(entry)):
            problem(error)
        else:
            config.servers[name] = _overridden(base, entry, source)
            _note_codemode(config, entry)
        return
    error = check_entry(name, entry)
    if error is not None:
        problem(error)
        return
    clash = next(
        (other for other in config.servers if other != name and namespace(other) == namespace(name)), None
    )
    if clash is not None:
        problem(f'conflicts with server "{clash}" (names that differ only in "-" and "_" are one server)')
        return
    config.servers[name] = server_from_entry(name, entry, source)
    _note_codemode(config, entry)


def _overridden(base: ServerConfig, entry: dict[str, Any], source: ConfigSource) -> ServerConfig:
    """``base`` with what a project override sets; everything else (credentials) stays."""
    changes: dict[str, Any] = {"override_source": source, "raw": {**base.raw, **entry}}
    if "enabled" in entry:
        changes["enabled"] = entry["enabled"]
    if "exposure" in entry:
        changes["exposure"] = effective_exposure(entry["exposure"])
        changes["written_exposure"] = entry["exposure"]
    if "toolExposure" in entry:
        changes["tool_exposure"] = dict(entry["toolExposure"])
    return replace(base, **changes)


def _note_codemode(config: McpConfig, entry: dict[str, Any]) -> None:
    """The one note that pi's codemode is read as deferred, the first time a file says it."""
    words = [entry.get("exposure"), *dict(entry.get("toolExposure") or {}).values()]
    if any(word in ("codemode", "codemode-deferred") for word in words) and CODEMODE_NOTE not in config.notes:
        config.notes.append(CODEMODE_NOTE)


def transport_of(entry: dict[str, Any]) -> Transport | None:
    """stdio or http as pi picks it: a ``url`` (type absent, http or streamable-http) selects
    HTTP, else a ``command`` (type absent or stdio) selects stdio; None when neither fits."""
    kind = entry.get("type")
    if "url" in entry and kind in (None, "http", "streamable-http"):
        return "http"
    if "command" in entry and kind in (None, "stdio"):
        return "stdio"
    return None


def check_entry(name: str, entry: Any) -> str | None:
    """Why ``entry`` cannot be a server named ``name`` (one line), or None when it can."""
    if not _SERVER_NAME.fullmatch(name):
        return 'invalid server name (use only letters, digits, "_" and "-")'
    if not isinstance(entry, dict):
        return "must be an object"
    kind = entry.get("type")
    if kind == "sse":
        return (
            "the legacy SSE transport is not supported; servers that offer SSE often also offer "
            "streamable HTTP, commonly at /mcp instead of /sse"
        )
    if kind is not None and kind not in TYPES:
        return 'type must be "stdio", "http" or "streamable-http"'
    error = _check_common(entry)
    if error is not None:
        return error
    transport = transport_of(entry)
    if transport == "http":
        return _check_http(entry)
    if transport == "stdio":
        return _check_stdio(entry)
    if kind == "stdio":
        return 'a stdio server needs "command"'
    if kind is not None:
        return 'an HTTP server needs "url"'
    return 'needs either "command" (stdio) or "url" (streamable HTTP)'


def _check_enabled(entry: dict[str, Any]) -> str | None:
    if "enabled" in entry and not isinstance(entry["enabled"], bool):
        return "enabled must be true or false"
    return None


def _check_common(entry: dict[str, Any]) -> str | None:
    if (error := _check_enabled(entry)) is not None:
        return error
    if "description" in entry and not isinstance(entry["description"], str):
        return "description must be a string"
    if "timeout" in entry:
        timeout = entry["timeout"]
        number = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
        if not number or not (0 < timeout < float("inf")):
            return "timeout must be a positive number of seconds"
    return _check_exposures(entry)


def _check_exposures(entry: dict[str, Any]) -> str | None:
    words = ", ".join(f'"{word}"' for word in PI_EXPOSURES)
    if "exposure" in entry and entry["exposure"] not in PI_EXPOSURES:
        return f"exposure must be one of {words}"
    if "toolExposure" in entry:
        tool_exposure = entry["toolExposure"]
        if not isinstance(tool_exposure, dict):
            return "toolExposure must map tool names to exposures"
        for tool, word in tool_exposure.items():
            if word not in PI_EXPOSURES:
                return f'toolExposure "{tool}" must be one of {words}'
    return None


def _is_string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _check_stdio(entry: dict[str, Any]) -> str | None:
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        return "command must be a string naming one executable (its arguments go in args)"
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return "args must be an array of strings"
    if "env" in entry and not _is_string_map(entry["env"]):
        return "env must map names to strings"
    if "cwd" in entry and not isinstance(entry["cwd"], str):
        return "cwd must be a string"
    return None


def _check_http(entry: dict[str, Any]) -> str | None:
    url = entry["url"]
    if not isinstance(url, str) or not _is_http_url(url):
        return "url must be an http or https URL"
    if "headers" in entry and not _is_string_map(entry["headers"]):
        return "headers must map names to strings"
    if "oauth" in entry:
        return check_oauth(entry["oauth"])
    return None


def _is_http_url(text: str, *, https_only_off_loopback: bool = False) -> bool:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if https_only_off_loopback and parts.scheme == "http":
        return _host(text) in LOOPBACK_HOSTS
    return True


def _host(url: str) -> str:
    """The host as pi's URL class names it (``[::1]`` keeps its brackets)."""
    netloc = urlsplit(url).netloc.rpartition("@")[2].lower()
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1]
    return netloc.partition(":")[0]


def check_oauth(oauth: Any) -> str | None:
    """pi's rules for the ``oauth`` object of an HTTP server (one line, or None)."""
    if not isinstance(oauth, dict):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret", "scope"):
        if key in oauth and not isinstance(oauth[key], str):
            return f"oauth.{key} must be a string"
    port = oauth.get("callbackPort")
    if "callbackPort" in oauth and (
        not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535
    ):
        return "oauth.callbackPort must be a port number"
    callback = oauth.get("callbackUrl")
    if "callbackUrl" in oauth:
        if not isinstance(callback, str) or not _is_loopback_redirect(callback):
            return (
                "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1 or [::1] "
                "without query or fragment"
            )
        url_port = urlsplit(callback).port
        if url_port is not None and port is not None and url_port != port:
            return "oauth.callbackUrl and oauth.callbackPort name different ports"
    name = oauth.get("clientName")
    if "clientName" in oauth and (not isinstance(name, str) or not name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = oauth.get("clientRegistration")
    if "clientRegistration" in oauth and registration not in REGISTRATIONS:
        return 'oauth.clientRegistration must be "auto", "dcr" or "cimd"'
    if registration == "cimd":
        if "clientId" in oauth or "clientName" in oauth:
            return (
                'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'
            )
        if isinstance(callback, str) and (
            _host(callback) == "[::1]" or urlsplit(callback).path != "/callback"
        ):
            return (
                'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or '
                "127.0.0.1 with path /callback"
            )
    if "authServerMetadataUrl" in oauth:
        metadata = oauth["authServerMetadataUrl"]
        if not isinstance(metadata, str) or not _is_http_url(metadata, https_only_off_loopback=True):
            return (
                "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1 or [::1]"
            )
    return None


def _is_loopback_redirect(text: str) -> bool:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return (
        parts.scheme == "http"
        and _host(text) in LOOPBACK_HOSTS
        and not parts.query
        and not parts.fragment
        and "?" not in text
        and "#" not in text
    )


def server_from_entry(name: str, entry: dict[str, Any], source: ConfigSource) -> ServerConfig:
    """A checked entry (:func:`check_entry` said None) as a :class:`ServerConfig`."""
    transport = transport_of(entry)
    assert transport is not None, "check_entry accepted an entry without a transport"
    written = entry.get("exposure")
    server = ServerConfig(
        name=name,
        transport=transport,
        source=source,
        timeout=float(entry.get("timeout", DEFAULT_TIMEOUT)),
        enabled=entry.get("enabled", True),
        exposure=effective_exposure(written),
        written_exposure=written,
        tool_exposure=dict(entry.get("toolExposure") or {}),
        description=entry.get("description"),
        raw=dict(entry),
    )
    if transport == "stdio":
        server.command = entry["command"]
        server.args = list(entry.get("args", []))
        server.env = dict(entry.get("env") or {})
        server.cwd = entry.get("cwd")
    else:
        server.url = entry["url"]
        server.headers = dict(entry.get("headers") or {})
        server.oauth = dict(entry["oauth"]) if "oauth" in entry else None
    return server


def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$", re.DOTALL)


def tool_exposure_for(server: ServerConfig, tool_name: str) -> Exposure:
    """How one tool of ``server`` reaches the model: its exact ``toolExposure`` key, else the first
    ``*`` pattern that matches (file order), else the server's exposure; codemode -> deferred."""
    overrides = server.tool_exposure
    if tool_name in overrides:
        return effective_exposure(overrides[tool_name])
    for pattern, word in overrides.items():
        if "*" in pattern and _pattern(pattern).match(tool_name):
            return effective_exposure(word)
    return server.exposure


@dataclass(frozen=True, slots=True)
class ResolvedServer:
    """What connecting a server uses: values filled in, paths made absolute."""

    name: str
    transport: Transport
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """Only the entry's own variables (the connection adds them to the usual environment)."""
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    oauth: dict[str, Any] | None = None
    timeout: float = DEFAULT_TIMEOUT


def _home(value: str) -> str:
    """A leading ``~/`` (or ``~`` alone) names the home folder, as in a shell and in pi."""
    if value == "~":
        return str(Path.home())
    if value.startswith("~/"):
        return os.path.join(str(Path.home()), value[2:])
    return value


def _value(server: ServerConfig, what: str, value: str) -> str:
    """One ``env`` / ``headers`` / ``oauth`` value filled in. Its error names the server and the
    key and says why (an unset variable by name, a command by its exit code), never the value:
    neither the command as written (it may carry a credential) nor what it printed."""
    from pi_tui.ai.config_values import resolve_config_value
    from pi_tui.ai.errors import ConfigError

    try:
        return resolve_config_value(
            value,
            f'MCP server "{server.name}" {what}',
            legacy_names=False,
            cached=False,
            quote_command=False,
        )
    except ConfigError as error:
        raise McpConfigError(str(error)) from None


_CLAUDE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _claude_expanded(server: ServerConfig, what: str, text: str) -> str:
    """Claude Code's ``.mcp.json`` syntax: ``${VAR}`` and ``${VAR:-default}`` in command, args,
    url, env and headers (pi's files have ``${VAR}`` in env and headers only). An unset variable
    without a default is an error naming the server, the field and the variable."""

    def value(match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        found = os.environ.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        raise McpConfigError(f'MCP server "{server.name}" {what}: environment variable {name} is not set')

    return _CLAUDE_VARIABLE.sub(value, text)


def _as_claude_writes(server: ServerConfig) -> ServerConfig:
    """A ``.mcp.json`` entry with Claude Code's variables filled in (other files: unchanged)."""
    if server.source.scope != "claude-project":
        return server
    from dataclasses import replace

    def one(what: str, text: str) -> str:
        return _claude_expanded(server, what, text)

    return replace(
        server,
        command=one("command", server.command) if server.command is not None else None,
        args=[one(f"args[{index}]", arg) for index, arg in enumerate(server.args)],
        url=one("url", server.url) if server.url is not None else None,
        env={key: one(f'env "{key}"', text) for key, text in server.env.items()},
        headers={key: one(f'header "{key}"', text) for key, text in server.headers.items()},
    )


def resolved(server: ServerConfig, session_cwd: Path) -> ResolvedServer:
    """``server`` ready to connect: ``${VAR}`` and whole-value ``!command`` in env, headers and
    oauth strings resolved (a command runs again on every call: a reconnect fetches a fresh
    token), ``~/`` in command, args and cwd, a relative cwd against ``session_cwd``.

    Raises :class:`McpConfigError` (one line naming the server and key) for an unset variable or
    a command that fails. Claude Code's ``.mcp.json`` entries get its own ``${VAR:-default}``
    expansion first (see :func:`_claude_expanded`).
    """
    claude = server.source.scope == "claude-project"
    server = _as_claude_writes(server)

    def filled(what: str, value: str) -> str:  # Claude's values are final once expanded
        return value if claude else _value(server, what, value)

    oauth = None
    if server.oauth is not None:
        oauth = {
            key: filled(f"oauth.{key}", value) if isinstance(value, str) else value
            for key, value in server.oauth.items()
        }
    if server.transport == "http":
        headers = {key: filled(f'header "{key}"', value) for key, value in server.headers.items()}
        return ResolvedServer(
            name=server.name,
            transport="http",
            url=server.url,
            headers=headers,
            oauth=oauth,
            timeout=server.timeout,
        )
    env = {key: filled(f'env "{key}"', value) for key, value in server.env.items()}
    cwd = session_cwd / _home(server.cwd) if server.cwd is not None else session_cwd
    return ResolvedServer(
        name=server.name,
        transport="stdio",
        command=_home(server.command or ""),
        args=[_home(arg) for arg in server.args],
        env=env,
        cwd=Path(os.path.normpath(cwd)),
        timeout=server.timeout,
    )
