"""Turning ``/skill:name args`` and ``/template args`` into the prompt they stand for.

The agent asks this after extension commands and ``input`` handlers have had their say (as pi
orders them), so an extension can still take over a ``/skill:`` or template line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_tui.commands import SlashCommand, parse_slash
from pi_tui.resources.skills import Skill, SkillSet, skill_message
from pi_tui.resources.templates import TemplateSet, expand


@dataclass(slots=True)
class PromptExpander:
    skills: SkillSet = field(default_factory=lambda: SkillSet([], []))
    templates: TemplateSet = field(default_factory=lambda: TemplateSet({}, []))
    skill_commands: bool = True
    """pi's ``enableSkillCommands``: without it, ``/skill:name`` is neither offered nor expanded."""

    def expand(self, text: str) -> str | None:
        """The prompt ``text`` stands for, or None when it is no skill or template command."""
        parsed = parse_slash(text.strip())
        if parsed is None:
            return None
        name, args = parsed
        if name.startswith("skill:"):
            if not self.skill_commands:
                return None
            skill = self.skills.get(name.removeprefix("skill:"))
            return skill_message(skill, args) if skill is not None else None
        template = self.templates.templates.get(name)
        return expand(template, args) if template is not None else None

    def commands(self) -> list[SlashCommand]:
        """The ``/name`` entries for completion, the palette and rpc's ``get_commands``."""
        found = [
            SlashCommand(
                template.name,
                template.description or "(prompt template)",
                usage=template.argument_hint,
                source="prompt",
                path=str(template.path),
            )
            for template in self.templates.templates.values()
        ]
        if self.skill_commands:
            found += [_skill_command(skill) for skill in self.skills.skills]
        return found

    @property
    def problems(self) -> list[str]:
        return self.skills.problems + self.templates.problems


def _skill_command(skill: Skill) -> SlashCommand:
    return SlashCommand(
        f"skill:{skill.name}", skill.description, usage="[request]", source="skill", path=str(skill.path)
    )


def register_commands(registry: Any, expander: PromptExpander) -> list[str]:
    """Put the templates and skills in ``registry``; one line for each name already taken."""
    problems: list[str] = []
    for command in expander.commands():
        try:
            registry.register(command)
        except ValueError as error:
            problems.append(f"{command.path}: {error}; /{command.name} is not offered")
    return problems
