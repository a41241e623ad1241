"""grep (with ripgrep and with the Python fallback), find and ls on real trees in ``tmp_path``."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.tools import ToolContext, ToolError, ToolResult
from pi_tui.tools.find import FindTool
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.ls import LsTool
from pi_tui.tools.walk import PathGlob, glob_to_regex
from tests.support.requires import require_tool


def run(tool: Any, cwd: Path, **args: Any) -> ToolResult:
    return asyncio.run(tool.execute("call_1", args, ToolContext(cwd=cwd)))


def text(tool: Any, cwd: Path, **args: Any) -> str:
    return run(tool, cwd, **args).content[0].text  # type: ignore[union-attr]


def fails(tool: Any, cwd: Path, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        run(tool, cwd, **args)
    return str(info.value)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "README.md": "Hello project\nsee src\n",
        "src/app.py": "import os\n\ndef main():\n    print('hello world')\n    return os.sep\n",
        "src/util.py": "def helper():\n    return 'Hello'\n",
        "src/web/page.ts": "const hello = 1;\n",
        "src/web/page.test.ts": "test('hello')\n",
        ".github/ci.yml": "name: hello\n",
        ".gitignore": "build/\n*.log\n",
        "build/out.py": "hello = 'built'\n",
        "debug.log": "hello from the log\n",
        "node_modules/lib/index.js": "hello\n",
        ".git/config": "hello\n",
    }
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    (root / "data.bin").write_bytes(b"hello\x00\x01binary")
    return root


@pytest.fixture(params=["rg", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each grep test with ripgrep and with the pure-Python search."""
    if request.param == "rg":
        require_tool("rg")
    else:
        real_which = shutil.which
        monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "rg" else real_which(name))
    return request.param


# --- grep ------------------------------------------------------------------------------------


def test_grep_lists_matches_sorted_and_skips_ignored(tree: Path, backend: str) -> None:
    out = text(GrepTool(), tree, pattern="hello")
    assert out.split("\n") == [
        ".github/ci.yml:1:name: hello",
        "src/app.py:4:    print('hello world')",
        "src/web/page.test.ts:1:test('hello')",
        "src/web/page.ts:1:const hello = 1;",
    ]


def test_grep_ignore_case_literal_and_path(tree: Path, backend: str) -> None:
    out = text(GrepTool(), tree, pattern="HELLO", ignoreCase=True, path="src")
    assert out.split("\n") == [
        "app.py:4:    print('hello world')",
        "util.py:2:    return 'Hello'",
        "web/page.test.ts:1:test('hello')",
        "web/page.ts:1:const hello = 1;",
    ]
    assert text(GrepTool(), tree, pattern="os.sep", literal=True) == "src/app.py:5:    return os.sep"
    assert text(GrepTool(), tree, pattern="o.\\.sep") == "src/app.py:5:    return os.sep"
    assert text(GrepTool(), tree, pattern="o.\\.sep", literal=True) == "No matches found."
    assert text(GrepTool(), tree, pattern="def", path="src/util.py") == "util.py:1:def helper():"


def test_grep_glob_filters_files(tree: Path, backend: str) -> None:
    assert text(GrepTool(), tree, pattern="hello", glob="*.ts").split("\n") == [
        "src/web/page.test.ts:1:test('hello')",
        "src/web/page.ts:1:const hello = 1;",
    ]
    assert (
        text(GrepTool(), tree, pattern="hello", glob="src/**/*.{py,yml}")
        == "src/app.py:4:    print('hello world')"
    )


def test_grep_context_lines(tree: Path, backend: str) -> None:
    out = text(GrepTool(), tree, pattern="print|helper", context=1)
    assert out.split("\n") == [
        "src/app.py-3-def main():",
        "src/app.py:4:    print('hello world')",
        "src/app.py-5-    return os.sep",
        "--",
        "src/util.py:1:def helper():",
        "src/util.py-2-    return 'Hello'",
    ]


def test_grep_limit_and_long_lines(tmp_path: Path, backend: str) -> None:
    (tmp_path / "many.txt").write_text("".join(f"match {i}\n" for i in range(1, 301)))
    result = run(GrepTool(), tmp_path, pattern="match", limit=5)
    body, note = result.content[0].text.split("\n\n")  # type: ignore[union-attr]
    assert body.split("\n")[-1] == "many.txt:5:match 5" and body.count("\n") == 4
    assert "Stopped at 5 matches" in note
    assert result.details == {"matchLimitReached": 5}
    assert text(GrepTool(), tmp_path, pattern="match").count("\n") == 99 + 2  # default 100, then a note

    (tmp_path / "many.txt").unlink()
    (tmp_path / "min.js").write_text("var a='needle';" + "x" * 2000 + "\n")
    out = text(GrepTool(), tmp_path, pattern="needle")
    assert out.startswith("min.js:1:var a='needle';xxx") and "[line cut]" in out and "500 characters" in out


def test_grep_errors(tree: Path, backend: str) -> None:
    assert "Invalid regular expression" in fails(GrepTool(), tree, pattern="(unclosed")
    assert "not found" in fails(GrepTool(), tree, pattern="x", path="missing")
    assert "\n  - pattern: " in fails(GrepTool(), tree, pattern="")
    assert text(GrepTool(), tree, pattern="zzz_nothing") == "No matches found."


def test_grep_fallback_honours_nested_gitignore_and_negation(tmp_path: Path, backend: str) -> None:
    files = {
        "keep.txt": "needle\n",
        "sub/.gitignore": "*.gen\n!important.gen\n/local.txt\n",
        "sub/a.gen": "needle\n",
        "sub/important.gen": "needle\n",
        "sub/local.txt": "needle\n",
        "sub/deeper/local.txt": "needle\n",
    }
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    assert text(GrepTool(), tmp_path, pattern="needle").split("\n") == [
        "keep.txt:1:needle",
        "sub/deeper/local.txt:1:needle",
        "sub/important.gen:1:needle",
    ]


def test_anchored_pattern_of_the_repository_top_applies_below_it(tmp_path: Path, backend: str) -> None:
    """``/pkg/gen/`` in the top .gitignore hides ``gen`` when searching from ``pkg`` (as git and
    rg do); the hand-written matcher dropped anchored patterns of parent folders."""
    (tmp_path / ".git").mkdir()
    files = {".gitignore": "/pkg/gen/\n", "pkg/gen/x.txt": "needle\n", "pkg/y.txt": "needle\n"}
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    assert text(GrepTool(), tmp_path / "pkg", pattern="needle") == "y.txt:1:needle"


def test_find_follows_git_for_braces_escaped_spaces_and_folder_negation(tmp_path: Path) -> None:
    """git has no ``{a,b}`` (the braces are literal) and ``\\ `` keeps a trailing space (both
    wrong in the hand-written matcher); ``!keep/`` in a deeper .gitignore re-includes that folder
    without re-including the ``*.log`` files inside it (pathspec alone would)."""
    files = {
        ".gitignore": "{a,b}.txt\nspace\\ \n*.log\nkeep/\n",
        "sub/.gitignore": "!keep/\n",
        "a.txt": "",
        "{a,b}.txt": "",
        "space ": "",
        "space": "",
        "sub/keep/x.log": "",
        "sub/keep/x.md": "",
        "keep/y.md": "",
    }
    root = tmp_path / "proj"
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    assert text(FindTool(), root, pattern="*").split("\n") == [
        ".gitignore",
        "a.txt",
        "space",
        "sub/",
        "sub/.gitignore",
        "sub/keep/",
        "sub/keep/x.md",
    ]


# --- globs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", True),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/deep/a.py", False),
        ("src/**", "src/deep/a.py", True),
        ("*.{ts,tsx}", "x/c.tsx", True),
        ("*.{ts,tsx}", "x/c.js", False),
        ("file?.[ch]", "file1.c", True),
        ("file[!0-9].c", "file1.c", False),
    ],
)
def test_path_glob(pattern: str, path: str, hit: bool) -> None:
    assert PathGlob(pattern).matches(path) is hit


def test_glob_star_stays_in_one_folder() -> None:
    assert glob_to_regex("a/*/c").match("a/b/c")
    assert not glob_to_regex("a/*/c").match("a/b/x/c")
    assert glob_to_regex("a/**/c").match("a/c")


# --- find ------------------------------------------------------------------------------------


def test_find_by_name_and_by_path(tree: Path) -> None:
    assert text(FindTool(), tree, pattern="*.py") == "src/app.py\nsrc/util.py"
    assert text(FindTool(), tree, pattern="**/*.py") == "src/app.py\nsrc/util.py"
    assert text(FindTool(), tree, pattern="src/web/*.ts") == "src/web/page.test.ts\nsrc/web/page.ts"
    assert text(FindTool(), tree, pattern="*.test.ts", path="src") == "web/page.test.ts"
    assert text(FindTool(), tree, pattern="web") == "src/web/"
    assert text(FindTool(), tree, pattern="*.yml") == ".github/ci.yml"  # hidden, not ignored


def test_find_lists_a_folder_right_after_its_parent(tmp_path: Path) -> None:
    for name in ("a-b/x.md", "a/x.md", "a/z/y.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert text(FindTool(), tmp_path, pattern="*.md") == "a/x.md\na/z/y.md\na-b/x.md"


def test_find_limit_and_errors(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"f{i:02}.txt").write_text("")
    result = run(FindTool(), tmp_path, pattern="*.txt", limit=10)
    body, note = result.content[0].text.split("\n\n")  # type: ignore[union-attr]
    assert body.split("\n") == [f"f{i:02}.txt" for i in range(10)]
    assert "first 10" in note and result.details == {"resultLimitReached": 10}
    assert "No files found" in text(FindTool(), tmp_path, pattern="*.rs")
    assert "not found" in fails(FindTool(), tmp_path, pattern="*", path="nope")
    assert "not a folder" in fails(FindTool(), tmp_path, pattern="*", path="f00.txt")


# --- ls --------------------------------------------------------------------------------------


def test_ls_sorted_with_folders_and_dotfiles(tree: Path) -> None:
    assert text(LsTool(), tree).split("\n") == [
        ".git/",
        ".github/",
        ".gitignore",
        "build/",
        "data.bin",
        "debug.log",
        "node_modules/",
        "README.md",
        "src/",
    ]
    assert text(LsTool(), tree, path="src") == "app.py\nutil.py\nweb/"


def test_ls_limit_and_errors(tmp_path: Path) -> None:
    tmp_path = tmp_path / "listing"  # tmp_path itself holds the test's agent dir
    tmp_path.mkdir()
    for i in range(7):
        (tmp_path / f"e{i}").write_text("")
    result = run(LsTool(), tmp_path, limit=3)
    body, note = result.content[0].text.split("\n\n")  # type: ignore[union-attr]
    assert body == "e0\ne1\ne2" and "3 of 7" in note
    assert "not found" in fails(LsTool(), tmp_path, path="missing")
    assert "not a folder" in fails(LsTool(), tmp_path, path="e0")
    (tmp_path / "void").mkdir()
    assert "empty" in text(LsTool(), tmp_path, path="void")
