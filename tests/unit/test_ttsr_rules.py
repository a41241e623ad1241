"""TTSR rule files: globs, front matter, conditions and scopes, discovery, buckets, listings,
and the built-in rules (specs/ttsr.md "Rule files", "Discovery", buckets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex

from pi_tui.config.settings import TtsrSettings
from pi_tui.resources.front_matter import parse_front_matter
from pi_tui.ttsr.globs import glob_matches, glob_to_regex
from pi_tui.ttsr.model import DEFAULT_SCOPE, BucketedRule, Rule, ScopeToken
from pi_tui.ttsr.rules import (
    NO_USE_REASON,
    DiscoveryReport,
    bucket_rules,
    discover_rules,
    display_path,
    format_rule_list,
    load_builtin_rules,
    looks_like_file_glob,
    parse_rule_text,
    split_top_level,
    system_prompt_sections,
)


def parse(front: str, body: str = "Do the right thing.", name: str = "r") -> Rule:
    return parse_rule_text(f"---\n{front}\n---\n{body}\n", name, Path(f"/rules/{name}.md"), "test", 100)


def edit(glob: str) -> ScopeToken:
    return ScopeToken("tool", "edit", glob)


def write(glob: str) -> ScopeToken:
    return ScopeToken("tool", "write", glob)


# --------------------------------------------------------------------------------------------- globs


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/pkg/a.py", True),  # basename match
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),  # "*" does not cross "/"
        ("src/**/*.py", "src/pkg/deep/a.py", True),
        ("src/**/*.py", "src/a.py", True),  # "**/" may be no folder at all
        ("**/*.py", "a.py", True),
        ("src/**", "src/a/b.txt", True),
        ("src/**", "srcx/a", False),
        ("?.py", "a.py", True),
        ("?.py", "ab.py", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("[a-c]x", "bx", True),
        ("src/{a,b}/*.py", "src/b/m.py", True),
        ("src/{a,b}/*.py", "src/c/m.py", False),
        ("{src/{a,b},lib}/*.py", "src/a/m.py", True),  # nested alternatives
        ("{src/{a,b},lib}/*.py", "lib/m.py", True),
        ("{src/{a,b},lib}/*.py", "src/c/m.py", False),
        ("*.{ts,tsx}", "web/App.tsx", True),
        ("src/*.py", "src\\win.py", True),  # backslashes in paths count as "/"
        ("src/*.py", "./src/a.py", True),
        ("*.PY", "a.py", False),  # case-sensitive
        ("Makefile", "sub/Makefile", True),
        ("\\*.py", "*.py", True),  # escaped star is literal
        ("\\*.py", "a.py", False),
    ],
)
def test_glob_matches(glob: str, path: str, expected: bool) -> None:
    assert glob_matches(glob, path) is expected


def test_glob_is_compiled_once() -> None:
    assert glob_to_regex("lib/**/*.rs") is glob_to_regex("lib/**/*.rs")
    assert glob_to_regex("*.py").fullmatch("x.py")


def test_unbalanced_glob_characters_stand_for_themselves() -> None:
    assert glob_matches("a[b", "a[b")
    assert glob_matches("{a", "{a")


# --------------------------------------------------------------------------------------------- YAML subset


def test_yaml_subset_scalars_lists_and_block_strings() -> None:
    front = parse_front_matter(
        "---\n"
        "# a comment\n"
        "count: 3\n"
        "ratio: 0.5\n"
        "on: true\n"
        "off: False\n"
        "nothing: ~\n"
        'double: "a: b # not a comment"\n'
        "single: 'it''s \\d'\n"
        "plain: hello world # a comment\n"
        "inline: [a, 'b, c', \"d\", 4, true]\n"
        "block:\n"
        "  - one\n"
        "  - 'two'\n"
        "same_indent:\n"
        "- x\n"
        "multi: [\n"
        "  p,\n"
        "  q\n"
        "]\n"
        "literal: |\n"
        "  line one\n"
        "    indented\n"
        "\n"
        "  line three\n"
        "folded: >\n"
        "  joined\n"
        "  words\n"
        "\n"
        "  next\n"
        "stripped: |-\n"
        "  no newline\n"
        "nested:\n"
        "  key: value\n"
        "---\n"
        "\n"
        "The body.\n"
    )
    assert front.present and front.warnings == []
    assert front.data == {
        "count": 3,
        "ratio": 0.5,
        "on": True,
        "off": False,
        "nothing": None,
        "double": "a: b # not a comment",
        "single": "it's \\d",
        "plain": "hello world",
        "inline": ["a", "b, c", "d", 4, True],
        "block": ["one", "two"],
        "same_indent": ["x"],
        "multi": ["p", "q"],
        "literal": "line one\n  indented\n\nline three\n",
        "folded": "joined words\nnext\n",
        "stripped": "no newline",
        "nested": {"key": "value"},
    }
    assert front.body.strip() == "The body."


def test_double_quoted_escapes_follow_yaml_and_unknown_ones_are_kept_with_a_warning() -> None:
    front = parse_front_matter('---\na: "tab\\there \\u00e9"\nb: "\\d+"\n---\n')
    assert front.data == {"a": "tab\there é", "b": "\\d+"}
    assert len(front.warnings) == 1 and "\\d" in front.warnings[0]


def test_invalid_front_matter_is_a_warning_and_the_rule_keeps_what_could_be_read() -> None:
    rule = parse("description: kept\nthis is not yaml\nalwaysApply: maybe\ncondition: [a, b")
    assert rule.description == "kept"
    assert rule.content == "Do the right thing."
    assert any("this is not yaml" in warning for warning in rule.warnings)
    assert any("alwaysApply" in warning for warning in rule.warnings)
    assert any("unclosed" in warning for warning in rule.warnings)
    assert rule.always_apply is False


def test_unclosed_front_matter_reads_the_file_as_content() -> None:
    rule = parse_rule_text("---\ndescription: x\nbody", "r", None, "test", 1)
    assert rule.description is None
    assert rule.content == "---\ndescription: x\nbody"
    assert rule.warnings


def test_no_front_matter() -> None:
    rule = parse_rule_text("\ufeffJust do it.\n", "plain", None, "test", 1)
    assert rule.content == "Just do it."
    assert rule.conditions == [] and rule.scopes is None and rule.warnings == []
    assert rule.effective_scopes == DEFAULT_SCOPE


def test_split_top_level_respects_brackets_braces_and_quotes() -> None:
    assert split_top_level("tool:edit(src/{a,b}/*.py), text") == ["tool:edit(src/{a,b}/*.py)", "text"]
    assert split_top_level("a{1,3}, [x,y], 'p, q', ") == ["a{1,3}", "[x,y]", "'p, q'"]


# --------------------------------------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("*.py", True),
        ("*.{ts,tsx}", True),
        ("src/**/*.ts", True),
        ("src/?.py", True),
        ("*.py$", False),  # regex metacharacter
        ("foo.*bar", False),  # has "*" but neither "/" nor "*.ext"
        ("(?i)todo", False),
        ("src/a.py", False),  # no glob character
        ("\\bany\\b", False),
    ],
)
def test_looks_like_file_glob(token: str, expected: bool) -> None:
    assert looks_like_file_glob(token) is expected


def test_glob_looking_condition_becomes_edit_and_write_scopes_and_dot_star() -> None:
    rule = parse("condition: '*.py'")
    assert rule.conditions == [".*"]
    assert rule.scopes == (edit("*.py"), write("*.py"))


def test_glob_condition_next_to_a_regex_keeps_the_regex() -> None:
    rule = parse("condition:\n  - src/**/*.ts\n  - 'as any'\n  - '*.tsx'")
    assert rule.conditions == ["as any"]
    assert rule.scopes == (edit("src/**/*.ts"), write("src/**/*.ts"), edit("*.tsx"), write("*.tsx"))


def test_glob_condition_scopes_add_to_explicit_scope() -> None:
    rule = parse("condition: ['*.py', print]\nscope: text")
    assert rule.scopes == (ScopeToken("text"), edit("*.py"), write("*.py"))


@pytest.mark.parametrize("key", ["ttsr_trigger", "ttsrTrigger", "condition"])
def test_condition_aliases(key: str) -> None:
    assert parse(f"{key}: console\\.log").conditions == ["console\\.log"]


def test_condition_key_wins_over_aliases_with_a_warning() -> None:
    rule = parse("condition: a\nttsrTrigger: b")
    assert rule.conditions == ["a"]
    assert any("ttsrTrigger" in warning for warning in rule.warnings)


def test_inline_flag_group_stays_in_the_pattern() -> None:
    rule = parse("condition: '(?i)todo:'")
    assert rule.conditions == ["(?i)todo:"]
    assert regex.compile(rule.conditions[0]).search("TODO: later")


def test_invalid_regex_is_warned_but_left_for_the_manager_to_refuse() -> None:
    rule = parse("condition: ['ok', '(unclosed']")
    assert rule.conditions == ["ok", "(unclosed"]
    assert any("(unclosed" in warning for warning in rule.warnings)


# --------------------------------------------------------------------------------------------- scope


def test_scope_string_split_on_commas_outside_braces() -> None:
    rule = parse("condition: x\nscope: tool:edit(src/{a,b}/*.py), text")
    assert rule.scopes == (edit("src/{a,b}/*.py"), ScopeToken("text"))


def test_scope_keywords_and_bare_tool_names() -> None:
    rule = parse(
        "condition: x\n"
        "scope: [TEXT, Thinking, tool, toolcall:Bash, Tool:Read(Docs/*.MD), tool(*.rs), Edit, "
        "write(Src/**)]"
    )
    assert rule.scopes == (
        ScopeToken("text"),
        ScopeToken("thinking"),
        ScopeToken("tool"),
        ScopeToken("tool", "bash"),
        ScopeToken("tool", "read", "Docs/*.MD"),  # tool name lower-cased, glob keeps its case
        ScopeToken("tool", None, "*.rs"),
        ScopeToken("tool", "edit"),
        ScopeToken("tool", "write", "Src/**"),
    )


def test_bare_name_equals_tool_prefix() -> None:
    assert parse("condition: x\nscope: bash").scopes == parse("condition: x\nscope: tool:bash").scopes


def test_bad_scope_tokens_are_warned_and_skipped() -> None:
    rule = parse("condition: x\nscope: text, foo bar, text(*.py), a:b, tool:, bash")
    assert rule.scopes == (ScopeToken("text"), ScopeToken("tool", "bash"))
    bad = [warning for warning in rule.warnings if warning.startswith("scope:")]
    assert len(bad) == 4
    assert any("'foo bar'" in warning for warning in bad)


def test_scope_with_no_usable_token_reaches_nothing() -> None:
    rule = parse("condition: x\nscope: '???'")
    assert rule.scopes == ()
    assert any("reaches nothing" in warning for warning in rule.warnings)


def test_scope_list_from_block_list() -> None:
    rule = parse("condition: x\nscope:\n  - tool:edit(*.py)\n  - thinking")
    assert rule.scopes == (edit("*.py"), ScopeToken("thinking"))


# --------------------------------------------------------------------------------------------- other keys


def test_globs_gate_from_string_or_list() -> None:
    assert parse("globs: src/**/*.ts, {lib,test}/*.ts").globs == ["src/**/*.ts", "{lib,test}/*.ts"]
    assert parse("globs:\n  - '*.py'\n  - docs/**").globs == ["*.py", "docs/**"]
    assert parse("globs: ['*.go']").globs == ["*.go"]


def test_interrupt_mode_always_apply_description() -> None:
    rule = parse("interruptMode: Prose-Only\nalwaysApply: true\ndescription: >\n  Use the\n  logger.")
    assert rule.interrupt_mode == "prose-only"
    assert rule.always_apply is True
    assert rule.description == "Use the logger."
    bad = parse("interruptMode: sometimes")
    assert bad.interrupt_mode is None and any("interruptMode" in w for w in bad.warnings)


def test_front_matter_and_identity_are_kept() -> None:
    rule = parse("condition: x\ncustom: 7", name="mine")
    assert rule.name == "mine" and rule.source == "test" and rule.priority == 100
    assert rule.front_matter == {"condition": "x", "custom": 7}
    assert rule.builtin is False


# --------------------------------------------------------------------------------------------- discovery


def put(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def rule_text(description: str, extra: str = "") -> str:
    return f"---\ndescription: {description}\n{extra}---\n{description} body\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agentdir"))
    return home


def test_discovery_tree(tmp_path: Path, home: Path) -> None:
    outer = tmp_path / "outer"
    repo = outer / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    agent = tmp_path / "agentdir"

    put(outer / ".agent" / "rules" / "above-repo.md", rule_text("never seen"))
    put(repo / ".agent" / "rules" / "shared.md", rule_text("far"))
    put(repo / "pkg" / ".agent" / "rules" / "shared.md", rule_text("near"))
    put(repo / ".agent" / "rules" / "python-bare-except.md", rule_text("project override of a builtin"))
    put(repo / ".agent" / "rules" / "broken.md", b"---\ndescription: \xff\xfe\n---\n")
    put(repo / ".agent" / "rules" / "notes.txt", "not a rule")
    put(agent / "rules" / "dup.md", rule_text("agent dir"))
    put(agent / "rules" / "agent-only.md", rule_text("agent only"))
    put(repo / ".omp" / "rules" / "dup.md", rule_text("omp"))
    put(repo / ".omp" / "rules" / "omp-only.md", rule_text("omp only"))
    put(home / ".agents" / "rules" / "home-rule.md", rule_text("home"))
    put(home / ".agents" / "rules" / "shared.md", rule_text("home shared"))
    put(repo / ".cursor" / "rules" / "cursor-rule.mdc", rule_text("cursor", "globs: *.ts,*.tsx\n"))
    put(home / ".cursor" / "rules" / "home-cursor.mdc", rule_text("home cursor"))
    put(repo / ".windsurf" / "rules" / "wind.md", rule_text("windsurf"))
    put(repo / ".clinerules", "Always run the tests.\n")
    put(
        repo / ".github" / "instructions" / "lang" / "py.instructions.md",
        "---\napplyTo: '**/*.py, scripts/**'\n---\nPython instructions\n",
    )

    report = DiscoveryReport()
    rules = discover_rules(cwd, TtsrSettings(), report=report)
    by_name = {rule.name: rule for rule in rules}

    assert "above-repo" not in by_name  # walking up stops at the repository root
    assert "broken" not in by_name and "notes" not in by_name
    assert any("broken.md" in warning for warning in report.warnings)

    assert by_name["shared"].description == "near"  # nearer folder first, then farther, then home
    assert by_name["shared"].path == repo / "pkg" / ".agent" / "rules" / "shared.md"
    assert by_name["dup"].description == "agent dir"  # priority 100 beats .omp's 60
    assert by_name["dup"].source == "agent-dir/rules"
    assert by_name["python-bare-except"].description == "project override of a builtin"
    assert by_name["python-bare-except"].builtin is False

    expected = {
        "shared": (".agent/rules", 100),
        "agent-only": ("agent-dir/rules", 100),
        "home-rule": ("~/.agents/rules", 70),
        "omp-only": (".omp/rules", 60),
        "cursor-rule": (".cursor/rules", 50),
        "home-cursor": ("~/.cursor/rules", 50),
        "wind": (".windsurf/rules", 50),
        "clinerules": (".clinerules", 40),
        "py": (".github/instructions", 30),
    }
    for name, (source, priority) in expected.items():
        assert (by_name[name].source, by_name[name].priority) == (source, priority), name

    assert by_name["cursor-rule"].globs == ["*.ts", "*.tsx"]
    assert by_name["py"].globs == ["**/*.py", "scripts/**"]  # applyTo becomes globs
    assert by_name["clinerules"].content == "Always run the tests."

    builtins = [rule for rule in rules if rule.builtin]
    assert builtins and all(rule.source == "builtin" and rule.priority == 1 for rule in builtins)

    priorities = [rule.priority for rule in rules]
    assert priorities == sorted(priorities, reverse=True)
    assert len({rule.name for rule in rules}) == len(rules)

    shadowed = {(loser.name, loser.description) for loser, _ in report.shadowed}
    assert {("shared", "far"), ("shared", "home shared"), ("dup", "omp")} <= shadowed
    assert ("python-bare-except", None) not in shadowed
    assert any(loser.builtin and loser.name == "python-bare-except" for loser, _ in report.shadowed)


def test_clinerules_folder(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    put(repo / ".clinerules" / "style.md", rule_text("style"))
    put(repo / ".clinerules" / "skip.txt", "no")
    rules = [rule for rule in discover_rules(repo, TtsrSettings()) if not rule.builtin]
    assert [(rule.name, rule.source, rule.priority) for rule in rules] == [("style", ".clinerules", 40)]


def test_home_folder_reached_walking_up_is_read_once(tmp_path: Path, home: Path) -> None:
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    put(home / ".agents" / "rules" / "once.md", rule_text("once"))
    report = DiscoveryReport()
    rules = discover_rules(project, TtsrSettings(), report=report)
    assert [rule.name for rule in rules if rule.name == "once"] == ["once"]
    assert report.shadowed == []


# --------------------------------------------------------------------------------------------- buckets


class FakeManager:
    """Accepts every rule except those named in ``refuse`` (with the given reason)."""

    def __init__(self, refuse: dict[str, str] | None = None) -> None:
        self.refuse = refuse or {}
        self.seen: list[str] = []

    def add_rule(self, rule: Rule) -> str | None:
        self.seen.append(rule.name)
        return self.refuse.get(rule.name)


def make(name: str, **fields: object) -> Rule:
    rule = Rule(name=name, content=f"{name} content", path=Path(f"/r/{name}.md"), source="test", priority=1)
    for key, value in fields.items():
        setattr(rule, key, value)
    return rule


def test_every_bucket() -> None:
    rules = [
        make("ttsr", conditions=["x"]),
        make("refused-always", conditions=["("], always_apply=True),
        make("refused-book", conditions=["("], description="d"),
        make("refused-drop", conditions=["("]),
        make("always", always_apply=True),
        make("book", description="read me"),
        make("nothing"),
        make("disabled", conditions=["x"], always_apply=True),
        make("builtin", conditions=["x"], builtin=True),
    ]
    manager = FakeManager(
        {name: "invalid regex" for name in ("refused-always", "refused-book", "refused-drop")}
    )
    settings = TtsrSettings(disabled_rules=["disabled"], builtin_rules=False)
    result = {item.rule.name: (item.bucket, item.reason) for item in bucket_rules(rules, manager, settings)}
    assert result == {
        "ttsr": ("ttsr", ""),
        "refused-always": ("always-apply", "invalid regex"),
        "refused-book": ("rulebook", "invalid regex"),
        "refused-drop": ("dropped", "invalid regex"),
        "always": ("always-apply", ""),
        "book": ("rulebook", ""),
        "nothing": ("dropped", NO_USE_REASON),
        "disabled": ("dropped", "disabled in settings"),
        "builtin": ("dropped", "built-in rules are disabled in settings"),
    }
    assert manager.seen == ["ttsr", "refused-always", "refused-book", "refused-drop"]


def test_builtin_rules_go_to_the_manager_when_enabled() -> None:
    manager = FakeManager()
    [item] = bucket_rules([make("b", conditions=["x"], builtin=True)], manager, TtsrSettings())
    assert item.bucket == "ttsr" and manager.seen == ["b"]


def test_ttsr_disabled_registers_nothing_but_prompt_rules_still_work() -> None:
    manager = FakeManager()
    rules = [
        make("cond", conditions=["x"]),
        make("cond-book", conditions=["x"], description="d"),
        make("always", always_apply=True),
    ]
    result = bucket_rules(rules, manager, TtsrSettings(enabled=False))
    assert [(item.bucket, item.reason) for item in result] == [
        ("dropped", "ttsr disabled"),
        ("rulebook", "ttsr disabled"),
        ("always-apply", ""),
    ]
    assert manager.seen == []


def test_system_prompt_sections() -> None:
    bucketed = [
        BucketedRule(make("a", content="Always A."), "always-apply"),
        BucketedRule(make("t", conditions=["x"]), "ttsr"),
        BucketedRule(make("book", description="How to release"), "rulebook"),
        BucketedRule(make("gone"), "dropped", NO_USE_REASON),
        BucketedRule(make("b", content="Always B."), "always-apply"),
    ]
    sections = system_prompt_sections(bucketed)
    assert sections[:2] == ["Always A.", "Always B."]
    assert len(sections) == 3
    assert "read tool" in sections[2]
    assert "- book: How to release (/r/book.md)" in sections[2]
    assert "gone" not in "".join(sections) and "t content" not in "".join(sections)
    assert system_prompt_sections([]) == []


def test_display_path(tmp_path: Path, home: Path) -> None:
    assert display_path(home / "proj" / "a.md", home / "proj") == "a.md"
    assert display_path(home / ".agents" / "rules" / "x.md", home / "proj") == "~/.agents/rules/x.md"
    assert display_path(tmp_path / "elsewhere.md", home) == str(tmp_path / "elsewhere.md")
    assert display_path(None, home) == "(no file)"


def test_format_rule_list(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "proj"
    near = make("no-print", conditions=["print"], path=cwd / ".agent" / "rules" / "no-print.md")
    near.source = ".agent/rules"
    far = make("style", path=home / ".agents" / "rules" / "style.md", warnings=["scope: cannot read 'x'"])
    far.source = "~/.agents/rules"
    odd = make("odd", conditions=["("], always_apply=True, path=cwd / "odd.md")
    text = format_rule_list(
        [
            BucketedRule(near, "ttsr"),
            BucketedRule(far, "dropped", NO_USE_REASON),
            BucketedRule(odd, "always-apply", "invalid regex"),
        ],
        cwd,
    )
    lines = text.splitlines()
    assert lines[0].split() == ["no-print", "ttsr", ".agent/rules", ".agent/rules/no-print.md"]
    assert lines[1].split() == ["style", "dropped", "~/.agents/rules", "~/.agents/rules/style.md"]
    assert lines[2] == f"    dropped: {NO_USE_REASON}"
    assert lines[3] == "    warning: scope: cannot read 'x'"
    assert lines[4].split() == ["odd", "always-apply", "test", "odd.md"]
    assert lines[5] == "    not a TTSR rule: invalid regex"
    assert format_rule_list([], cwd) == "No rules found."


def test_format_rule_list_with_report(tmp_path: Path, home: Path) -> None:
    winner = make("dup", path=tmp_path / "a" / "dup.md")
    loser = make("dup", path=tmp_path / "b" / "dup.md")
    report = DiscoveryReport(warnings=["cannot read x.md: bad"], shadowed=[(loser, winner)])
    text = format_rule_list([BucketedRule(winner, "dropped", NO_USE_REASON)], tmp_path, report)
    assert "dup (test, b/dup.md) shadowed by test, a/dup.md" in text
    assert "warning: cannot read x.md: bad" in text


# --------------------------------------------------------------------------------------------- built-in rules

# name -> (file extensions it must cover, violating code, the same code fixed). Several examples
# start a line, which in a tool call's JSON arguments follows a "\n" escape (no word boundary).
BUILTIN_EXAMPLES: dict[str, tuple[tuple[str, ...], list[str], list[str]]] = {
    "python-bare-except": (
        (".py",),
        ["try:\n    run()\nexcept:\n    pass\n", "try:\n    run()\n    except :\n"],
        ["try:\n    run()\nexcept OSError:\n    log.exception('run failed')\n", "except_hook = 1\n"],
    ),
    "python-mutable-default": (
        (".py",),
        [
            "import x\ndef add(item, items: list[str] = []):\n    items.append(item)\n",
            "    def merge(self, a, b={}):\n",
            "async def f(\n    seen=set(),\n):\n",
        ],
        [
            "import x\ndef add(item, items: list[str] | None = None):\n"
            "    items = [] if items is None else items\n",
            "def f(x: dict[str, int] | None = None) -> list[int]:\n    y = []\n",
        ],
    ),
    "python-datetime-utcnow": (
        (".py",),
        ["stamp = datetime.datetime.utcnow()\n", "from datetime import *\nutcfromtimestamp (0)\n"],
        ["stamp = datetime.datetime.now(datetime.timezone.utc)\n", "datetime.fromtimestamp(0, tz=UTC)\n"],
    ),
    "python-debugger-leftover": (
        (".py",),
        ["def f(x):\n    import pdb; pdb.set_trace()\n    return x\n", "x = 1\nbreakpoint()\n"],
        ["def f(x):\n    log.debug('x=%r', x)\n    return x\n", "def breakpoint_handler():\n"],
    ),
    "typescript-no-any": (
        (".ts", ".tsx"),
        [
            "function parse(raw: string): any {\n  return JSON.parse(raw);\n}\n",
            "const rows = data as any;\n",
            "let list: Array<any> = [];\n",
        ],
        [
            "function parse(raw: string): unknown {\n  return JSON.parse(raw) as unknown;\n}\n",
            "const anyValue: Company = pick(anything);\n",
        ],
    ),
    "typescript-ts-ignore": (
        (".ts", ".tsx"),
        ["// @ts-ignore\nconst n: number = value;\n", "// @ts-nocheck\n"],
        ["// @ts-expect-error upstream type is wrong\nconst n: number = value;\n"],
    ),
    "go-no-ioutil": (
        (".go",),
        ['import (\n\t"io/ioutil"\n)\n', "func save() {\n\tioutil.WriteFile(name, data, 0o644)\n}\n"],
        ['import (\n\t"io"\n\t"os"\n)\n', "func save() {\n\tos.WriteFile(name, data, 0o644)\n}\n"],
    ),
    "rust-no-box-leak": (
        (".rs",),
        ["let name: &'static str = Box::leak(s.into_boxed_str());\n", "fn f() {\nBox::leak(b)\n}"],
        ["static NAME: OnceLock<String> = OnceLock::new();\n", "let b = Box::new(s);\n"],
    ),
}


def test_builtin_rules_load_and_each_has_an_example() -> None:
    rules = load_builtin_rules()
    assert 6 <= len(rules) <= 10
    assert {rule.name for rule in rules} == set(BUILTIN_EXAMPLES)
    for rule in rules:
        assert rule.builtin and rule.source == "builtin" and rule.priority == 1
        assert rule.warnings == [], rule.name
        assert rule.interrupt_mode == "never"
        assert rule.description and rule.content
        assert rule.path is not None and rule.path.is_file()


@pytest.mark.parametrize("name", sorted(BUILTIN_EXAMPLES))
def test_builtin_rule_is_scoped_to_its_language(name: str) -> None:
    [rule] = [rule for rule in load_builtin_rules() if rule.name == name]
    extensions, _, _ = BUILTIN_EXAMPLES[name]
    scopes = rule.effective_scopes
    assert scopes and all(s.source == "tool" and s.tool in ("edit", "write") and s.glob for s in scopes)
    for tool in ("edit", "write"):
        for extension in extensions:
            assert any(
                s.tool == tool and glob_matches(s.glob or "", f"src/mod{extension}") for s in scopes
            ), (tool, extension)
    for other in (".md", ".txt", ".js", ".pyc"):
        if other not in extensions:
            assert not any(glob_matches(s.glob or "", f"src/mod{other}") for s in scopes)


@pytest.mark.parametrize("name", sorted(BUILTIN_EXAMPLES))
def test_builtin_rule_regex_catches_the_violation_not_the_fix(name: str) -> None:
    [rule] = [rule for rule in load_builtin_rules() if rule.name == name]
    extensions, bad_examples, good_examples = BUILTIN_EXAMPLES[name]
    patterns = [regex.compile(condition, regex.MULTILINE) for condition in rule.conditions]
    assert patterns and ".*" not in rule.conditions

    def hits(code: str) -> bool:
        return any(pattern.search(code) for pattern in patterns)

    # Tool-call arguments stream in as raw JSON: the patterns must work on escaped text too.
    def as_edit(code: str) -> str:
        return json.dumps({"path": f"src/mod{extensions[0]}", "edits": [{"oldText": "", "newText": code}]})

    for bad in bad_examples:
        assert hits(bad) and hits(as_edit(bad)), bad
    for good in good_examples:
        assert not hits(good) and not hits(as_edit(good)), good


def test_a_failing_manager_does_not_stop_startup() -> None:
    class Broken:
        def add_rule(self, rule: Rule) -> str | None:
            raise RuntimeError("boom")

    [item] = bucket_rules([make("r", conditions=["x"], description="d")], Broken(), TtsrSettings())
    assert (item.bucket, item.reason) == ("rulebook", "registration failed: boom")


def test_backspace_from_double_quoted_regex_is_flagged() -> None:
    rule = parse('condition: "\\bfoo"')
    assert rule.conditions == ["\bfoo"]
    assert any("single quotes" in warning for warning in rule.warnings)
    assert not any("control" in w for w in parse("condition: '\\bfoo'").warnings)
