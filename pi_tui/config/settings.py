"""Settings: ``<agent dir>/settings.json`` overridden by ``<cwd>/.agent/settings.json``.

Both files use pi's keys (camelCase). Objects merge key by key, the project file winning; keys we
do not know are kept (``extra="allow"``) so settings written for pi or a newer pi-tui survive.
A file that is not valid JSON, or has a value of the wrong type, is a :class:`SettingsError`
naming the file and the line.

The project file is someone else's (a cloned repository): it is read only when the folder is
trusted (:mod:`pi_tui.config.project_trust`), and even then some keys stay the user's alone
(:func:`_users_alone`): a project can switch secret hiding on but never off, cannot switch a
built-in secret pattern off, and never says how far projects are trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic.alias_generators import to_camel

from pi_tui.config.paths import global_settings_path, project_settings_path


class SettingsError(Exception):
    """A settings file cannot be used; the message names the file and line."""


class _Group(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class CompactionOverride(_Group):
    """pi 1.x's ``compaction.modelOverrides["provider/id"]``: a field left out falls back to the
    ordinary setting on its own."""

    reserve_tokens: int | None = Field(None, ge=0)
    keep_recent_tokens: int | None = Field(None, ge=0)


class CompactionSettings(_Group):
    enabled: bool = True
    reserve_tokens: int = Field(default=16384, ge=0)
    keep_recent_tokens: int = Field(default=20000, ge=0)
    model_overrides: dict[str, CompactionOverride] = Field(default_factory=dict)
    """Keyed by the exact ``provider/modelId`` (see :meth:`for_model`)."""

    def for_model(self, provider: str | None, model_id: str | None) -> CompactionSettings:
        """These settings with the active model's override applied, field by field."""
        override = self.model_overrides.get(f"{provider}/{model_id}")
        if override is None:
            return self
        changes = {
            name: value
            for name in ("reserve_tokens", "keep_recent_tokens")
            if (value := getattr(override, name)) is not None
        }
        return self.model_copy(update=changes)


class BranchSummarySettings(_Group):
    reserve_tokens: int = Field(default=16384, ge=0)
    skip_prompt: bool = False


class RetrySettings(_Group):
    enabled: bool = True
    max_retries: int = Field(default=3, ge=0)
    base_delay_ms: int = Field(default=2000, ge=0)
    max_agent_delay_ms: int = Field(default=60000, ge=0)
    """pi 1.x: the longest wait between retries of a turn (a server's Retry-After beyond it
    fails the turn instead of waiting)."""
    idle_timeout_seconds: float = Field(default=90.0, gt=0)
    """A reply that sends nothing for this long after its first byte is given up."""
    first_byte_timeout_seconds: float = Field(default=120.0, gt=0)
    """The same before the first byte (a model may think for a while before it writes)."""


class TtsrSettings(_Group):
    """Time Traveling Stream Rules (see docs and specs/ttsr.md)."""

    enabled: bool = True
    context_mode: Literal["discard", "keep"] = "discard"
    interrupt_mode: Literal["never", "prose-only", "tool-only", "always"] = "always"
    repeat_mode: Literal["once", "after-gap"] = "once"
    repeat_gap: int = Field(default=10, ge=1)
    builtin_rules: bool = True
    disabled_rules: list[str] = Field(default_factory=list)


class SecretsSettings(_Group):
    """Secret obfuscation (pi_tui/secrets): what may not leave the machine in a request."""

    enabled: bool = False
    """Environment variables with secret-looking names, secrets.yml entries and the built-in
    patterns; the API keys pi-tui itself knows are hidden whatever this says."""
    disabled_patterns: list[str] = Field(default_factory=list)
    """Built-in patterns switched off by name (``jwt``, ``aws-access-key``, ...)."""


class ImageSettings(_Group):
    block_images: bool = False
    """Images stay in the session but the model is sent a short text in their place."""


class ThinkingBudgetsSettings(_Group):
    """Token budgets per thinking level for models that take a budget, not an effort word."""

    minimal: int | None = Field(default=None, ge=0)
    low: int | None = Field(default=None, ge=0)
    medium: int | None = Field(default=None, ge=0)
    high: int | None = Field(default=None, ge=0)


class CodemodeSettings(_Group):
    """pi 1.x's ``codemode`` tool settings: kept for pi's sake, pi-tui has no codemode tool."""

    mode: Literal["on", "only"] = "on"
    inline_budget: int = Field(default=3000, ge=0)


class TerminalSettings(_Group):
    """pi 1.x's ``terminal.*``: what the terminal is taken to support."""

    show_images: bool = True
    image_width_cells: int = Field(default=60, ge=1)
    clear_on_shrink: bool = False
    show_terminal_progress: bool = False
    """OSC 9;4 progress in the terminal's tab while the agent works."""
    hyperlinks: bool | Literal["auto"] = "auto"
    images: Literal["kitty", "iterm2", "auto", False] = "auto"
    true_color: bool | Literal["auto"] = "auto"


class MarkdownSettings(_Group):
    code_block_indent: str = "  "
    mermaid: Literal["off", "final", "streaming"] = "streaming"


ThinkingLevelName = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
TimeoutMs = int | Literal["disabled"]
TreeFilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
QueueMode = Literal["one-at-a-time", "all"]
DoubleEscapeAction = Literal["tree", "fork", "none"]


class CheckpointSettings(_Group):
    """File checkpoints (pi_tui/checkpoints, docs/checkpoints.md): the project's files recorded
    around each turn's tools so /tree can bring them back."""

    enabled: bool = True
    max_file_bytes: int = Field(default=5 * 1024 * 1024, ge=0)
    """Files larger than this are not recorded (0: no limit)."""
    max_files: int = Field(default=50_000, ge=1)
    """More files than this to record at once switch checkpoints off for the folder."""


class Settings(_Group):
    default_provider: str | None = None
    default_model: str | None = None
    default_thinking_level: ThinkingLevelName | None = None
    model_thinking_levels: dict[str, ThinkingLevelName] = Field(default_factory=dict)
    """pi 1.x: the start-up thinking level per exact ``provider/modelId`` (wins over
    ``defaultThinkingLevel`` for that model)."""
    show_cache_miss_notices: bool = False
    cache_warming: Literal["off", "streaming", "idle"] = "idle"
    external_editor: str | None = None
    """The command Ctrl+G opens (else ``$VISUAL``, ``$EDITOR``, then the platform's)."""
    default_tools: list[str] | None = None
    """pi 1.x: the tools on at start; plain names replace the defaults, ``+name`` / ``-name``
    add to or take from them (``--tools`` wins)."""
    codemode: CodemodeSettings = Field(default_factory=CodemodeSettings)
    session_share_destination: Literal["auto", "gist", "radius"] = "auto"
    tui_mode: Literal["regular", "fullscreen"] = "fullscreen"
    fullscreen_exit_output: Literal["transcript", "resume-hint"] = "transcript"
    fullscreen_scrollbar: Literal["auto", "always", "hidden"] = "auto"
    fullscreen_copy_on_select: bool = True
    fullscreen_wheel_scroll_lines: Literal["auto"] | int = "auto"
    output_pad: Literal[0, 1] = 1
    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    markdown: MarkdownSettings = Field(default_factory=MarkdownSettings)
    http_proxy: str | None = None
    """Read from the user's settings only (a project cannot send our requests elsewhere)."""
    http_idle_timeout_ms: TimeoutMs = 300000
    websocket_connect_timeout_ms: TimeoutMs = 15000
    self_update_command: list[str] | None = None
    enable_skill_commands: bool = True
    """pi's ``enableSkillCommands``: false offers no ``/skill:name`` commands (skills are still
    listed in the system prompt for the model to read)."""
    enable_analytics: bool = False
    theme: str | None = None
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = Field(default_factory=BranchSummarySettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    ttsr: TtsrSettings = Field(default_factory=TtsrSettings)
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    secrets: SecretsSettings = Field(default_factory=SecretsSettings)
    tree_filter_mode: TreeFilterMode = "default"
    hide_thinking_block: bool = False
    quiet_startup: bool | Literal["header"] = False
    """pi 1.x's ``"header"`` keeps the header; pi-tui shows it whole (as ``false``)."""
    shell_path: str | None = None
    enabled_models: list[str] | None = None
    """pi's ``enabledModels``: the patterns of the models Ctrl+P cycles (``--models`` wins)."""
    shell_command_prefix: str | None = None
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"
    double_escape_action: DoubleEscapeAction = "tree"
    editor_padding_x: int = 0
    """0-3 columns; out-of-range values are clamped where used, as pi does when saving."""
    autocomplete_max_visible: int = 5
    """3-20 rows, clamped where used."""
    images: ImageSettings = Field(default_factory=ImageSettings)
    thinking_budgets: ThinkingBudgetsSettings = Field(default_factory=ThinkingBudgetsSettings)
    session_dir: str | None = None
    """pi's ``sessionDir``: sessions go straight into this folder (relative: to the project);
    ``PI_CODING_AGENT_SESSION_DIR`` and ``--session-dir`` win (pi_tui/config/session_dir.py)."""
    default_project_trust: Literal["ask", "always", "never"] = "ask"
    """pi's ``defaultProjectTrust``: what happens in a project folder with no saved decision
    (pi_tui/config/project_trust.py). Read from the user's settings only."""
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """What the project's settings tried and were not allowed (one line each)."""
        return self._notes


def load_settings(cwd: str | None = None, *, project: bool | None = None) -> Settings:
    """pi's settings, then ours over them, then the project's (when ``cwd`` is given and the
    folder is trusted).

    ``project`` is this run's trust answer (:class:`~pi_tui.config.project_trust.ProjectTrust`);
    None asks the saved decision without asking the user (``-p``-like callers: listing rules,
    exporting), so a caller that forgets never loads an untrusted project's settings.
    """
    merged = _pi_settings()
    sources: list[tuple[Path, str]] = []
    notes: list[str] = []
    if cwd is not None and project is None:
        from pi_tui.config.project_trust import saved_trust_allows

        project = saved_trust_allows(cwd)
    project_path = _project_settings_file(cwd) if cwd and project else None
    for path in (global_settings_path(), project_path):
        if path is None:
            continue
        data, text = _read_json_object(path)
        if data is None:
            continue
        sources.append((path, text))
        if path == project_path:
            data, ignored = _users_alone(data, merged)
            if ignored:
                notes.append(
                    f"{path}: ignored {', '.join(ignored)} (a project can only tighten secret "
                    "hiding; trust, the proxy and the update command are the user's to choose)"
                )
        merged = _with_default_tools(merged, data)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as error:
        raise _explain(error, sources) from None
    settings._notes = notes
    return settings


def _project_settings_file(cwd: str) -> Path | None:
    """The project's settings file, unless ``<cwd>/.agent`` is the agent dir (then the global
    file, already read, is the same one)."""
    from pi_tui.config.project_trust import project_dir

    return project_settings_path(cwd) if project_dir(cwd) is not None else None


_SECRETS_OFF_KEYS = ("disabledPatterns", "disabled_patterns")
_USER_ONLY_KEYS = frozenset(
    {"httpProxy", "http_proxy", "selfUpdateCommand", "self_update_command", "cacheWarming", "cache_warming"}
)
"""pi 1.x's agent-directory-only keys: where requests go, what runs to update, cache spend."""


def _users_alone(data: dict[str, Any], user: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The project's settings minus what only the user may set, and what was left out.

    - anything about trust (``defaultProjectTrust``): a project cannot vouch for itself;
    - pi 1.x's user-only keys (``httpProxy``, ``selfUpdateCommand``, ``cacheWarming``);
    - ``secrets.enabled: false`` when the user's settings have it on (on is always allowed);
    - ``secrets.disabledPatterns``: switching a built-in pattern off loosens hiding.
    """
    data = dict(data)
    ignored: list[str] = []
    for key in [key for key in data if "trust" in key.lower().replace("_", "") or key in _USER_ONLY_KEYS]:
        del data[key]
        ignored.append(key)
    if "secrets" not in data:
        return data, ignored
    secrets = data["secrets"]
    if not isinstance(secrets, dict):
        del data["secrets"]
        ignored.append("secrets (not an object)")
        return data, ignored
    secrets = dict(secrets)
    if "enabled" in secrets and secrets["enabled"] is not True:
        user_secrets = user.get("secrets")
        user_on = isinstance(user_secrets, dict) and user_secrets.get("enabled") is True
        value = secrets.pop("enabled")
        if user_on or value is not False:
            ignored.append(f"secrets.enabled: {json.dumps(value)}")
    for key in _SECRETS_OFF_KEYS:
        if key in secrets:
            value = secrets.pop(key)
            if value:
                ignored.append(f"secrets.{key}")
    data["secrets"] = secrets
    return data, ignored


def _pi_settings() -> dict[str, Any]:
    """The settings of pi's folder (pi_tui/config/pi_folder.py) that pi-tui can use.

    They are pi's, written for pi: a file pi-tui cannot read is passed over, and a key whose
    value pi-tui's settings reject (a level or mode pi-tui does not have) is left out, so that
    pi's file never stops pi-tui from starting; ours and the project's stay strict.
    """
    from pi_tui.config.pi_folder import pi_file

    path = pi_file("settings.json")
    try:
        data = _read_json_object(path)[0] if path is not None else None
    except SettingsError:
        return {}
    if not data:
        return {}
    for _attempt in range(3):
        try:
            Settings.model_validate(data)
            return data
        except ValidationError as error:
            rejected = {str(problem["loc"][0]) for problem in error.errors() if problem["loc"]}
            data = {key: value for key, value in data.items() if key not in rejected}
    return {}


def _with_default_tools(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``deep_merge``, except that a ``defaultTools`` list of only ``+name``/``-name`` entries
    adds to the list below it instead of replacing it (pi 1.x: a project's ``["+grep"]`` keeps
    the user's selection and adds grep; the entries apply in order at start-up)."""
    merged = deep_merge(base, override)
    below, above = base.get("defaultTools"), override.get("defaultTools")
    only_changes = (
        isinstance(above, list)
        and bool(above)
        and all(isinstance(entry, str) and entry[:1] in ("+", "-") for entry in above)
    )
    if only_changes and isinstance(below, list) and isinstance(above, list):
        merged["defaultTools"] = [*below, *above]
    return merged


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``; nested objects merge, everything else replaces."""
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = value
    return result


def _without_none(merged: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``merged`` minus the keys ``changes`` set to None (only those: a null the user wrote
    elsewhere in the file stays)."""
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _without_none(dict(merged[key]), value)
    return merged


def _read_json_object(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read settings: {error}") from None
    from pi_tui.jsonio import parse_object_file

    try:
        return parse_object_file(text, path, "settings must be a JSON object"), text
    except ValueError as error:
        raise SettingsError(str(error)) from None


def _explain(error: ValidationError, sources: list[tuple[Path, str]]) -> SettingsError:
    problem = error.errors()[0]
    keys = [str(part) for part in problem["loc"]]
    dotted = ".".join(keys)
    # The value came from the last file that mentions the key; point at its line.
    for path, text in reversed(sources):
        line = _line_of_key(text, keys[-1]) if keys else None
        if line is not None:
            return SettingsError(f"{path}, line {line}: setting '{dotted}': {problem['msg']}")
    where = sources[-1][0] if sources else "settings"
    return SettingsError(f"{where}: setting '{dotted}': {problem['msg']}")


def _line_of_key(text: str, key: str) -> int | None:
    needle = f'"{key}"'
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


def update_global_settings(changes: dict[str, Any]) -> Path:
    """Write ``changes`` (camelCase keys, nested dicts merged) into the global settings file.

    A None value removes its key, so the default applies again (as pi writes an unset value).
    Everything else in the file, including keys pi-tui does not know, is kept. The file is
    replaced atomically, so a crash never leaves half a settings file. A file that is not valid
    JSON is not touched (SettingsError): the user's text is worth more than our change.
    """
    import os
    import tempfile

    path = global_settings_path()
    data, _text = _read_json_object(path)
    merged = _without_none(deep_merge(data or {}, changes), changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(merged, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
