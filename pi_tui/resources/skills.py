"""Skills (the Agent Skills format): instructions the model reads when a task needs them.

A skill is a folder holding ``SKILL.md`` (front matter ``name`` and ``description``, then the
instructions), or a single ``.md`` file at the top of ``<agent dir>/skills`` or
``<cwd>/.agent/skills``. Only names, descriptions and paths go into the system prompt; the model
reads a skill's file with its ``read`` tool when a task matches (progressive disclosure), or the
user forces one in with ``/skill:name [args]``.

Sources, in order (a name found twice keeps the first): ``--skill PATH``, the ``skills`` lists of
the global and project settings, ``<agent dir>/skills``, ``<cwd>/.agent/skills``, and
``.agents/skills`` in ``<cwd>`` and the folders above it up to the repository root (nearest
first). ``--no-skills`` turns discovery off; ``--skill`` paths still load.

A project's skills (its settings' list, ``.agent/skills``, ``.agents/skills``) load only in a
trusted folder (``project=True``; :mod:`pi_tui.config.project_trust`): a skill tells the model
what to run, so a cloned repository's skills are as much the project's say as its settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from pi_tui.resources.front_matter import parse_front_matter

SKILL_FILE = "SKILL.md"
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path
    """The skill's Markdown file (``SKILL.md`` or a top-level ``.md``)."""
    hidden: bool = False
    """``disable-model-invocation: true``: left out of the system prompt, ``/skill:name`` only."""

    @property
    def folder(self) -> Path:
        return self.path.parent

    def body(self) -> str:
        """The instructions, without the front matter."""
        return parse_front_matter(self.path.read_text(encoding="utf-8", errors="replace")).body.strip()


@dataclass(slots=True)
class SkillSet:
    skills: list[Skill]
    problems: list[str]

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)


def discover_skills(
    cwd: str | Path,
    agent_dir: Path,
    cli_paths: list[str] | None = None,
    *,
    no_skills: bool = False,
    project_trusted: bool = True,
) -> SkillSet:
    """The skills for ``cwd``; ``project_trusted=False`` leaves the project's out (the user's
    own, ``--skill`` included, still load)."""
    from pi_tui.config.project_trust import agents_skill_folders, project_dir
    from pi_tui.resources.listed import listed_paths

    project = Path(cwd).resolve()
    project_folder = project_dir(project) if project_trusted else None
    found = SkillSet([], [])
    seen: set[str] = set()

    def add(skill: Skill | None) -> None:
        if skill is not None and skill.name not in seen:
            seen.add(skill.name)
            found.skills.append(skill)

    for text in cli_paths or ():
        for skill in _skills_at(
            Path(text).expanduser() if Path(text).is_absolute() else project / text, found, "--skill"
        ):
            add(skill)
    if not no_skills:
        folders: list[tuple[Path, bool]] = [(agent_dir / "skills", True)]
        if project_folder is not None:
            folders.append((project_folder / "skills", True))
        if project_trusted:
            folders += [(folder, False) for folder in agents_skill_folders(project)]
        for path in listed_paths(project, agent_dir, "skills", project_trusted=project_trusted):
            for skill in _skills_at(path, found, "settings skills"):
                add(skill)
        for folder, top_files in folders:
            for skill in _folder_skills(folder, top_files, found):
                add(skill)
    return found


def _skills_at(path: Path, found: SkillSet, where: str) -> list[Skill]:
    """A path given by the user: a skill file, a skill folder, or a folder of skills."""
    if path.is_file():
        skill = read_skill(path, found)
        return [skill] if skill is not None else []
    if path.is_dir():
        if (path / SKILL_FILE).is_file():
            skill = read_skill(path / SKILL_FILE, found)
            return [skill] if skill is not None else []
        return _folder_skills(path, True, found)
    found.problems.append(f"{where}: {path} does not exist")
    return []


def _folder_skills(folder: Path, top_files: bool, found: SkillSet) -> list[Skill]:
    """Skill folders under ``folder`` (``SKILL.md``, searched a few levels down) and, when
    ``top_files``, the ``.md`` files directly in it."""
    skills: list[Skill] = []
    try:
        children = sorted(folder.iterdir(), key=lambda child: child.name)
    except OSError:
        return skills
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            skills += _skill_folders(child, found, MAX_DEPTH)
        elif top_files and child.suffix == ".md" and child.is_file():
            skill = read_skill(child, found)
            if skill is not None:
                skills.append(skill)
    return skills


def _skill_folders(folder: Path, found: SkillSet, depth: int) -> list[Skill]:
    if (folder / SKILL_FILE).is_file():
        skill = read_skill(folder / SKILL_FILE, found)
        return [skill] if skill is not None else []
    if depth <= 0:
        return []
    try:
        children = sorted(
            child for child in folder.iterdir() if child.is_dir() and not child.name.startswith(".")
        )
    except OSError:
        return []
    return [skill for child in children for skill in _skill_folders(child, found, depth - 1)]


def read_skill(path: Path, found: SkillSet) -> Skill | None:
    """One skill file; a problem is noted and, when nothing usable is left, the skill skipped.
    Lenient as pi: a name that breaks the naming rules is used with a warning."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        found.problems.append(f"{path}: cannot read: {error.strerror or error}")
        return None
    front = parse_front_matter(text)
    data = front.data
    default_name = path.parent.name if path.name == SKILL_FILE else path.stem
    name = str(data.get("name") or default_name).strip()
    description = " ".join(str(data.get("description") or "").split())
    if not description:
        found.problems.append(f"{path}: skipped: a skill needs a description (front matter 'description:')")
        return None
    if not NAME_RULE.fullmatch(name) or len(name) > 64:
        found.problems.append(
            f"{path}: skill name {name!r} breaks the naming rules (a-z, 0-9, single hyphens)"
        )
    hidden = data.get("disable-model-invocation") in (True, "true")
    return Skill(name, description[:1024], path.resolve(), hidden)


def skills_prompt_section(skills: list[Skill]) -> str:
    """What the system prompt says about the skills the model may read (none: nothing)."""
    shown = [skill for skill in skills if not skill.hidden]
    if not shown:
        return ""
    entries = "\n".join(
        "  <skill>\n"
        f"    <name>{escape(skill.name)}</name>\n"
        f"    <description>{escape(skill.description)}</description>\n"
        f"    <location>{escape(str(skill.path))}</location>\n"
        "  </skill>"
        for skill in shown
    )
    return (
        "Skills: instructions for particular kinds of task, kept in files. When a task matches a\n"
        "skill's description, read its file with the read tool before starting, and follow it.\n"
        "Paths a skill mentions are relative to the folder holding its file.\n\n"
        f"<available_skills>\n{entries}\n</available_skills>"
    )


def skill_message(skill: Skill, args: str) -> str:
    """The user message ``/skill:name args`` sends: the skill's instructions, then the request."""
    text = (
        f'<skill name="{escape(skill.name)}" location="{escape(str(skill.path))}">\n'
        f"Paths in this skill are relative to {skill.folder}.\n\n{skill.body()}\n</skill>"
    )
    return f"{text}\n\n{args.strip()}" if args.strip() else text
