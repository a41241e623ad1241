"""Skills and prompt templates: discovery, the system prompt section, expansion of /commands."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.commands import CommandRegistry
from pi_tui.resources.expander import PromptExpander, register_commands
from pi_tui.resources.skills import discover_skills, skills_prompt_section
from pi_tui.resources.templates import discover_templates, expand


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(name: str, description: str = "Does things. Use when needed.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n\nRun ./run.sh.\n"


def test_skills_are_found_in_order_and_bad_ones_are_named(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    write(agent / "skills" / "pdf-tools" / "SKILL.md", skill("pdf-tools"))
    write(agent / "skills" / "deep" / "nested" / "inner" / "SKILL.md", skill("inner"))
    write(agent / "skills" / "loose.md", skill("loose"))
    write(agent / "skills" / "nodesc" / "SKILL.md", "---\nname: nodesc\n---\nbody\n")
    write(project / ".agent" / "skills" / "pdf-tools" / "SKILL.md", skill("pdf-tools", "the project's copy"))
    write(project / ".agents" / "skills" / "Bad_Name" / "SKILL.md", skill("Bad_Name"))
    write(project / ".agents" / "skills" / "ignored.md", skill("ignored"))
    write(project / ".agent" / "settings.json", json.dumps({"skills": ["../extra"]}))
    write(project / "extra" / "extra-skill" / "SKILL.md", skill("extra-skill"))
    write(project / "hidden" / "SKILL.md", skill("hidden-one", extra="disable-model-invocation: true\n"))
    found = discover_skills(project, agent, ["hidden"])
    names = [s.name for s in found.skills]
    assert names == ["hidden-one", "extra-skill", "inner", "loose", "pdf-tools", "Bad_Name"]
    assert found.get("pdf-tools").description == "Does things. Use when needed."  # the first wins
    assert any("nodesc" in p and "needs a description" in p for p in found.problems)
    assert any("'Bad_Name' breaks the naming rules" in p for p in found.problems)
    section = skills_prompt_section(found.skills)
    assert "<name>hidden-one</name>" not in section
    assert f"<location>{(agent / 'skills' / 'loose.md').resolve()}</location>" in section
    assert section.count("<skill>") == 5
    assert [s.name for s in discover_skills(project, agent, ["hidden"], no_skills=True).skills] == [
        "hidden-one"
    ]


def test_skill_and_template_commands_expand(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    write(agent / "skills" / "pdf-tools" / "SKILL.md", skill("pdf-tools"))
    write(
        agent / "prompts" / "review.md",
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nGlobal $1\n",
    )
    write(
        project / ".agent" / "prompts" / "review.md",
        "---\nargument-hint: <file> [focus]\n---\nReview $1 for ${@:2}\n",
    )
    write(project / ".agent" / "prompts" / "all.md", "Args: $@ | $ARGUMENTS | ${@:2:1} | $3 | $9.\n")
    expander = PromptExpander(discover_skills(project, agent), discover_templates(project, agent))
    assert (
        expander.expand('/review "src/my app.py" security speed') == "Review src/my app.py for security speed"
    )
    assert expander.expand("/all a b 'c d'") == "Args: a b c d | a b c d | b | c d | ."
    message = expander.expand("/skill:pdf-tools extract a.pdf")
    path = (agent / "skills" / "pdf-tools" / "SKILL.md").resolve()
    assert message.startswith(f'<skill name="pdf-tools" location="{path}">\n')
    assert "# pdf-tools\n\nRun ./run.sh.\n</skill>\n\nextract a.pdf" in message
    assert "description:" not in message
    assert expander.expand("/nothing here") is None and expander.expand("plain text") is None
    registry = CommandRegistry()
    assert register_commands(registry, expander) == []
    review = registry.get("review")
    assert (review.source, review.usage, review.description) == (
        "prompt",
        "<file> [focus]",
        "Review $1 for ${@:2}",
    )
    assert registry.get("skill:pdf-tools").source == "skill"
    write(agent / "prompts" / "model.md", "clashes with a built-in\n")
    clash = register_commands(CommandRegistry(), PromptExpander(templates=discover_templates(project, agent)))
    assert len(clash) == 1 and "/model is not offered" in clash[0]


def test_templates_expand_without_arguments(tmp_path: Path) -> None:
    write(tmp_path / "t.md", "Do $1 and $@.")
    templates = discover_templates(tmp_path, tmp_path / "agent", [str(tmp_path / "t.md")], no_templates=True)
    assert expand(templates.templates["t"], "") == "Do  and ."
    assert (
        discover_templates(tmp_path, tmp_path / "agent", ["missing.md"])
        .problems[0]
        .endswith("does not exist")
    )
