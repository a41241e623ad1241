"""``models.json`` as pi writes it: the schema, and reading it (JSON with comments).

pi reads the file with ``//`` comments and trailing commas allowed; so does :func:`read_models_file`,
which blanks them out keeping every position, so a JSON error still names the right line and
column. A file that cannot be used raises :class:`ConfigError` with one line naming the file and
the problem (line/column for bad JSON, the field path otherwise).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from pi_tui import jsonio
from pi_tui.ai.errors import ConfigError


class _Json(BaseModel):
    """camelCase keys as in pi's file; unknown keys kept; no silent type coercion."""

    model_config = ConfigDict(alias_generator=to_camel, extra="allow", strict=True)


class CostConfig(_Json):
    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class ModelOverrideConfig(_Json):
    """``modelOverrides`` entry: patches a built-in model; every field optional."""

    name: str | None = Field(None, min_length=1)
    reasoning: bool | None = None
    input: list[Literal["text", "image"]] | None = None
    context_window: int | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
    cost: CostConfig | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None


class ModelConfig(ModelOverrideConfig):
    """One entry of a provider's ``models`` list."""

    id: str = Field(min_length=1)
    api: str | None = Field(None, min_length=1)
    base_url: str | None = Field(None, min_length=1)


class ProviderConfig(_Json):
    name: str | None = None
    base_url: str | None = Field(None, min_length=1)
    api_key: str | None = Field(None, min_length=1)
    api: str | None = Field(None, min_length=1)
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    auth_header: bool | None = None
    models: list[ModelConfig] | None = None
    model_overrides: dict[str, ModelOverrideConfig] | None = None


class ModelsFile(_Json):
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)


def read_models_file(path: Path) -> ModelsFile:
    """Parse and validate ``path``; a missing or empty file is an empty configuration."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ModelsFile()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read models file: {error}") from None
    if not text.strip():
        return ModelsFile()
    if jsonio.too_deep(text):
        raise ConfigError(f"{path}: invalid JSON (nested more than {jsonio.MAX_DEPTH} levels deep)")
    try:
        data = json.loads(_strip_comments_and_trailing_commas(text))
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}, line {error.lineno} column {error.colno}: invalid JSON ({error.msg})"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f'{path}: expected a JSON object with a "providers" object, got {_kind(data)}')
    try:
        return ModelsFile.model_validate(data)
    except ValidationError as error:
        problem = error.errors()[0]
        where = field_path(problem["loc"])
        got = "" if problem["type"] == "missing" else f", got {_short(problem.get('input'))}"
        raise ConfigError(f"{path}: {where}: {json_terms(problem['msg'])}{got}") from None


def _strip_comments_and_trailing_commas(text: str) -> str:
    """pi tolerates ``//`` comments and trailing commas; blank them out, keeping every position."""
    chars = list(text)
    in_string = escaped = False
    i = 0
    while i < len(chars):
        char = chars[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and i + 1 < len(chars) and chars[i + 1] == "/":
            while i < len(chars) and chars[i] != "\n":
                chars[i] = " "
                i += 1
            continue
        i += 1
    blanked = "".join(chars)
    return re.sub(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])', lambda m: m[0] if m[0] != "," else " ", blanked)


def field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


def json_terms(message: str) -> str:
    """pydantic speaks Python ("dictionary", "instance of ProviderConfig"); the file is JSON."""
    message = re.sub(r" or instance of \w+", "", message)
    return message.replace("valid dictionary", "JSON object").replace("valid list", "JSON array")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, BaseModel) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
