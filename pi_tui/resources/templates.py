"""Prompt templates: Markdown files that ``/name args`` expands into a prompt.

``<agent dir>/prompts/*.md``, ``<cwd>/.agent/prompts/*.md`` (a project template wins over a
global one of the same name) and ``--prompt-template PATH`` (a file or a folder of ``.md`` files);
``--no-prompt-templates`` turns discovery off. The project's templates load only in a trusted
folder (``project_trusted``; :mod:`pi_tui.config.project_trust`). Front matter ``description`` and
``argument-hint`` show in completion. The body's ``$1``, ``$2``..., ``$@`` / ``$ARGUMENTS`` (all
arguments), ``${@:N}`` (from the Nth on) and ``${@:N:L}`` (L of them from the Nth) are replaced by
the arguments, split as a shell splits words (quotes keep spaces together).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from pi_tui.ttsr.rules import parse_front_matter

_PLACEHOLDER = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}|\$(\d+)|\$@|\$ARGUMENTS")


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    description: str
    argument_hint: str
    body: str
    path: Path


@dataclass(slots=True)
class TemplateSet:
    templates: dict[str, PromptTemplate]
    problems: list[str]


def discover_templates(
    cwd: str | Path,
    agent_dir: Path,
    cli_paths: list[str] | None = None,
    *,
    no_templates: bool = False,
    project_trusted: bool = True,
) -> TemplateSet:
    from pi_tui.config.project_trust import project_dir

    found = TemplateSet({}, [])
    project = Path(cwd).resolve()
    project_folder = project_dir(project) if project_trusted else None
    folders: list[Path] = [] if no_templates else [agent_dir / "prompts"]
    if project_folder is not None and not no_templates:
        folders.append(project_folder / "prompts")
    for folder in folders:  # later folders win: the project's template over the global one
        for path in _markdown_files(folder):
            _add(found, path)
    for text in cli_paths or ():
        path = Path(text).expanduser()
        path = path if path.is_absolute() else project / path
        if path.is_dir():
            for file in _markdown_files(path):
                _add(found, file)
        elif path.is_file():
            _add(found, path)
        else:
            found.problems.append(f"--prompt-template: {path} does not exist")
    return found


def _markdown_files(folder: Path) -> list[Path]:
    try:
        return sorted(path for path in folder.iterdir() if path.suffix == ".md" and path.is_file())
    except OSError:
        return []


def _add(found: TemplateSet, path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        found.problems.append(f"{path}: cannot read: {error.strerror or error}")
        return
    front = parse_front_matter(text)
    body = front.body.strip()
    description = str(front.data.get("description") or "").strip()
    if not description:  # as pi: the first line that says something
        description = next(
            (line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), ""
        )
    hint = str(front.data.get("argument-hint") or "").strip()
    found.templates[path.stem] = PromptTemplate(path.stem, description[:200], hint, body, path)


def split_arguments(args: str) -> list[str]:
    """Words as a shell splits them; unbalanced quotes fall back to plain whitespace."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand(template: PromptTemplate, args: str) -> str:
    """The prompt ``/name args`` sends."""
    words = split_arguments(args)

    def replace(match: re.Match[str]) -> str:
        start, length, position = match.group(1), match.group(2), match.group(3)
        if position is not None:
            index = int(position) - 1
            return words[index] if 0 <= index < len(words) else ""
        if start is not None:
            first = max(int(start) - 1, 0)
            chosen = words[first:] if length is None else words[first : first + int(length)]
            return " ".join(chosen)
        return " ".join(words)

    return _PLACEHOLDER.sub(replace, template.body)
