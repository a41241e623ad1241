"""The choices an ACP client shows for a session: mode, model and thinking level.

ACP's session config options (``configOptions``, ``session/set_config_option``) carry all
three; the older ``modes`` / ``session/set_mode`` pair carries the mode too, for clients that
only know that. Three modes:

- ``code``: the session's tools as configured, run without asking, as in pi (the default);
- ``careful``: the same tools, but edits, writes and commands ask the editor first
  (:mod:`pi_tui.acp.confirm`);
- ``ask``: only the tools that look and never change anything (read, grep, find, ls, all four
  even where the session's own set has fewer), for questions about a codebase the user does not
  want touched. MCP and extension tools stay: pi-tui cannot tell which of them write.

The model list is what ``/model`` offers (the models with a key here); values are
``provider/id``. The thinking levels are those the current model runs, so changing the model
sends the options again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_tui.acp.confirm import Ask, confirming
from pi_tui.ai.scoped_models import available_models
from pi_tui.ai.thinking import supported_levels
from pi_tui.tools import tools_by_name

MODES = {
    "code": ("Code", "Read, edit and run things in the project without asking (pi's way)"),
    "careful": ("Careful", "Ask before every edit, write and command"),
    "ask": ("Ask", "Look only: read, grep, find and ls; nothing in the project changes"),
}
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
LEVEL_NAMES = {
    "off": "Off",
    "minimal": "Minimal",
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "xhigh": "Extra high",
    "max": "Max",
}


class OptionError(ValueError):
    """A config option or value the session does not have (an invalid-params answer)."""


def model_value(model: Any) -> str:
    return f"{model.provider}/{model.id}"


@dataclass(slots=True)
class SessionTools:
    """Where a session's built-in tools are set: through the extension runner when there is one
    (it keeps extension tools on top, and rebuilds the agent's list whenever an extension changes
    the active tools, which would undo a list set on the agent directly), else on the agent."""

    agent: Any
    runner: Any = None

    def builtins(self) -> list[Any]:
        return list(self.runner.builtin_tools if self.runner is not None else self.agent.tools)

    def set_builtins(self, tools: list[Any]) -> None:
        if self.runner is not None:
            self.runner.set_builtin_tools(tools)
        else:
            self.agent.tools = tools


@dataclass(slots=True)
class SessionChoices:
    """The mode of one session and the tools it switches between (model and thinking level
    live on the agent itself)."""

    tools: SessionTools
    mode: str = "code"
    all_tools: list[Any] = field(default_factory=list)
    all_pool: list[Any] = field(default_factory=list)
    confirm: Ask | None = None
    """How ``careful`` mode asks the user (set by the session)."""

    def apply_mode(self, agent: Any, mode: str) -> None:
        if mode not in MODES:
            raise OptionError(f'Unknown mode "{mode}"; this agent has {", ".join(MODES)}')
        if not self.all_tools and not self.all_pool:
            self.all_tools, self.all_pool = self.tools.builtins(), list(agent.loadout_pool)
        self.mode = mode
        if mode == "ask":
            kept = [tool for tool in self.all_tools if tool.name in READ_ONLY_TOOLS]
            have = {tool.name for tool in kept}
            missing = [name for name in ("read", "grep", "find", "ls") if name not in have]
            self.tools.set_builtins(kept + tools_by_name(missing, agent.cwd))  # looking needs all four
            agent.loadout_pool = [tool for tool in self.all_pool if tool.name in READ_ONLY_TOOLS]
        elif mode == "careful" and self.confirm is not None:
            self.tools.set_builtins(confirming(self.all_tools, self.confirm))
            agent.loadout_pool = confirming(self.all_pool, self.confirm)
        else:
            self.tools.set_builtins(list(self.all_tools))
            agent.loadout_pool = list(self.all_pool)


def modes_state(choices: SessionChoices) -> dict[str, Any]:
    return {
        "currentModeId": choices.mode,
        "availableModes": [
            {"id": mode, "name": name, "description": description}
            for mode, (name, description) in MODES.items()
        ],
    }


def config_options(agent: Any, registry: Any, choices: SessionChoices) -> list[dict[str, Any]]:
    """The session's options as ACP ``SessionConfigOption`` objects (wire field names)."""
    current = model_value(agent.model)
    models = available_models(registry)
    if current not in {model_value(m) for m in models}:
        models.insert(0, agent.model)  # a session's own model, whatever its key says now
    model_options = model_choices(models)
    levels = supported_levels(agent.model)
    return [
        {
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": choices.mode,
            "options": [
                {"value": mode, "name": name, "description": text} for mode, (name, text) in MODES.items()
            ],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": current,
            "options": model_options,
        },
        {
            "id": "thinking",
            "name": "Thinking",
            "category": "thought_level",
            "type": "select",
            "currentValue": agent.thinking_level if agent.thinking_level in levels else levels[0],
            "options": [{"value": level, "name": LEVEL_NAMES.get(level, level)} for level in levels],
        },
    ]


def model_choices(models: list[Any]) -> list[dict[str, Any]]:
    """The model picker's options: flat for one provider, grouped by provider for more (a key
    for OpenRouter alone brings hundreds of models)."""
    by_provider: dict[str, list[dict[str, Any]]] = {}
    for model in models:
        option = {
            "value": model_value(model),
            "name": model.name or model.id,
            "description": model_value(model),
        }
        by_provider.setdefault(model.provider, []).append(option)
    if len(by_provider) <= 1:
        return [option for options in by_provider.values() for option in options]
    return [
        {"group": provider, "name": provider, "options": options} for provider, options in by_provider.items()
    ]


def set_option(agent: Any, registry: Any, choices: SessionChoices, option: str, value: Any) -> None:
    """Apply the client's choice; :class:`OptionError` names what is wrong."""
    if not isinstance(value, str):
        raise OptionError(f'"{option}" takes one of its listed values')
    if option == "mode":
        choices.apply_mode(agent, value)
    elif option == "model":
        provider, _, model_id = value.partition("/")
        model = registry.get(provider, model_id) if model_id else None
        if model is None:
            raise OptionError(f'Unknown model "{value}"')
        if registry.usable(model.provider, model.id) is None:
            raise OptionError(
                f'No API key for {model.provider}: sign in with "pi-tui auth login {model.provider}"'
            )
        agent.set_model(model, source="set")
    elif option == "thinking":
        levels = supported_levels(agent.model)
        if value not in levels:
            raise OptionError(
                f'Unknown thinking level "{value}" for {agent.model.id}; it has {", ".join(levels)}'
            )
        agent.set_thinking_level(value)
    else:
        raise OptionError(f'Unknown config option "{option}"; this agent has mode, model and thinking')
