"""Prompt templates: Markdown files that ``/name args`` expands into a prompt.

``<agent dir>/prompts/*.md``, ``<cwd>/.agent/prompts/*.md`` (a project template wins over a
global one of the same name) and ``--prompt-template PATH`` (a file or a folder of ``.md`` files);
``--no-prompt-templates`` turns discovery off. The project's templates load only in a trusted
folder (``project_trusted``; :mod:`pi_tui.config.project_trust`). Front matter ``description`` and
``argument-hint`` show in completion.

The body's placeholders, as pi 1.5.2 fills them in one pass (an argument or default that itself
contains ``$1`` is not expanded again): ``$1``, ``$2``... (one argument, empty when missing),
``$@`` / ``$ARGUMENTS`` (all, joined by spaces), ``${N:-default}`` (argument N, or ``default``
when it is missing or empty), ``${@:-default}`` / ``${ARGUMENTS:-default}`` (all, or
``default``), ``${@:N}`` (from the Nth on; 0 counts as 1) and ``${@:N:L}`` (L of them from the
Nth). Arguments are split as pi splits them (:func:`split_arguments`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pi_tui.resources.front_matter import parse_front_matter

_PLACEHOLDER = re.compile(
    r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}"  # ${1:-default}, ${@:-default}, ${ARGUMENTS:-default}
    r"|\$\{@:(\d+)(?::(\d+))?\}"  # ${@:N}, ${@:N:L}
    r"|\$(ARGUMENTS|@|\d+)"  # $1, $@, $ARGUMENTS
)


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
    from pi_tui.resources.listed import listed_paths

    found = TemplateSet({}, [])
    project = Path(cwd).resolve()
    project_folder = project_dir(project) if project_trusted else None
    folders: list[Path] = [] if no_templates else [agent_dir / "prompts"]
    if project_folder is not None and not no_templates:
        folders.append(project_folder / "prompts")
    for folder in folders:  # later folders win: the project's template over the global one
        for path in _markdown_files(folder):
            _add(found, path)
    if not no_templates:  # pi's settings "prompts": files or folders beside each settings file
        for path in listed_paths(project, agent_dir, "prompts", project_trusted=project_trusted):
            _add_path(found, path, "settings prompts")
    for text in cli_paths or ():
        path = Path(text).expanduser()
        _add_path(found, path if path.is_absolute() else project / path, "--prompt-template")
    return found


def _add_path(found: TemplateSet, path: Path, where: str) -> None:
    """A template file, or every ``.md`` file of a folder, named by the user."""
    if path.is_dir():
        for file in _markdown_files(path):
            _add(found, file)
    elif path.is_file():
        _add(found, path)
    else:
        found.problems.append(f"{where}: {path} does not exist")


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
    """The arguments of ``/name args``, split as pi 1.5.2 splits them.

    Whitespace separates arguments. A quote (``"`` or ``'``) groups only when it opens an
    argument, so the apostrophe in ``doesn't`` is text; inside quotes a backslash before that
    same quote keeps the quote as text (other backslashes stay as typed); ``""`` is an empty
    argument; a quote never closed is plain text and the rest is split normally.
    """
    words: list[str] = []
    current: list[str] = []
    started = False
    quote: str | None = None
    quote_start = 0
    i = 0
    while i < len(args):
        char = args[i]
        if quote is not None:
            if char == "\\" and args[i + 1 : i + 2] == quote:
                current.append(quote)
                i += 1
            elif char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'" and not started:
            quote, quote_start, started = char, i, True
        elif char.isspace():
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
        if quote is not None and i == len(args) - 1:
            # Never closed: the quote is a character of the argument it opened; read on from it.
            quote, current, i = None, [args[quote_start]], quote_start
        i += 1
    if started:
        words.append("".join(current))
    return words


def expand(template: PromptTemplate, args: str) -> str:
    """The prompt ``/name args`` sends."""
    return substitute(template.body, split_arguments(args))


def substitute(body: str, words: list[str]) -> str:
    """``body`` with its placeholders replaced from ``words``, in one pass."""
    every = " ".join(words)

    def positional(number: str) -> str:
        index = int(number) - 1
        return words[index] if 0 <= index < len(words) else ""

    def replace(match: re.Match[str]) -> str:
        target, default, start, length, simple = match.groups()
        if target is not None:
            value = every if target in ("@", "ARGUMENTS") else positional(target)
            return value or default
        if start is not None:
            first = max(int(start) - 1, 0)
            chosen = words[first:] if length is None else words[first : first + int(length)]
            return " ".join(chosen)
        return every if simple in ("@", "ARGUMENTS") else positional(simple)

    return _PLACEHOLDER.sub(replace, body)
