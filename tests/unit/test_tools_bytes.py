"""Bytes that are not UTF-8 and control characters, in names and in output, on real files.

The rule (pi_tui.text_safety): text decodes invalid bytes as U+FFFD; names are shown escaped
(``bad\\xffname.txt``) and the file tools take that spelling back; nothing a tool returns holds
a lone surrogate, so every result can be saved, sent and printed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_tui.agent.session import user_message
from pi_tui.agent.tool_calls import clean_result
from pi_tui.messages import TextContent
from pi_tui.modes.attachments import build_prompts
from pi_tui.text_safety import clean_text, for_terminal, parse_name, show_name
from pi_tui.tools import ToolContext, ToolResult
from pi_tui.tools.bash import BashTool
from pi_tui.tools.common import ESCAPED_NAMES_NOTE
from pi_tui.tools.edit import EditTool
from pi_tui.tools.find import FindTool
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.ls import LsTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.write import WriteTool
from tests.support.requires import require_tool

ODD_NAMES = [b"bad\xffname.txt", b"two\nlines\nname.txt", b"tab\there.txt", b"esc\x1b[31mred.txt"]
SHOWN = ["bad\\xffname.txt", "two\\nlines\\nname.txt", "tab\\there.txt", "esc\\x1b[31mred.txt"]


def run(tool: Any, cwd: Path, **args: Any) -> ToolResult:
    return asyncio.run(tool.execute("call_1", args, ToolContext(cwd=cwd)))


def text(tool: Any, cwd: Path, **args: Any) -> str:
    result = run(tool, cwd, **args)
    out = result.content[0].text  # type: ignore[union-attr]
    orjson.dumps(out)  # what the session writer and print mode need: no lone surrogate
    return out


def make(folder: Path, name: bytes, body: bytes = b"hello\n") -> None:
    with open(os.fsencode(folder) + b"/" + name, "wb") as handle:
        handle.write(body)


@pytest.fixture
def odd_tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name in ODD_NAMES:
        make(root, name)
    make(root, b"zzz.txt")
    os.mkdir(os.fsencode(root) + b"/dir\xfe")
    make(root, b"dir\xfe/inner.txt")
    return root


@pytest.fixture(params=["rg", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "rg":
        require_tool("rg")
    else:
        real_which = shutil.which
        monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "rg" else real_which(name))
    return request.param


# --- the rule itself -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"bad\xffname", b"a\nb", b"t\tab", b"e\x1bx", b"back\\slash\xff", b"\xc3\xa9t\xe9", b"cr\r", b"del\x7f"],
)
def test_every_odd_name_is_one_printable_line_and_parses_back_to_its_bytes(raw: bytes) -> None:
    shown = show_name(os.fsdecode(raw))
    assert shown.isprintable() and "\n" not in shown
    assert os.fsencode(parse_name(shown) or "") == raw


def test_ordinary_names_are_unchanged_and_not_parsed() -> None:
    assert show_name("src/app.py") == "src/app.py"
    assert show_name("C:\\odd\\but\\printable") == "C:\\odd\\but\\printable"
    assert show_name("é 日本") == "é 日本"
    assert parse_name("plain.txt") is None
    assert parse_name("nul\\x00byte") is None  # no real file name holds NUL
    assert show_name("c1\u0085") == "c1\\u0085"
    assert os.fsencode(parse_name("c1\\u0085") or "") == "c1\u0085".encode()


def test_clean_text_decodes_smuggled_bytes_and_replaces_lone_halves() -> None:
    assert clean_text("plain") == "plain"
    assert clean_text("hi \udcff there") == "hi \ufffd there"
    assert clean_text("\udcc3\udca9t\udce9") == "ét\ufffd"  # the bytes were UTF-8 é, then latin-1 é
    assert clean_text("cut \ud83d emoji") == "cut \ufffd emoji"


def test_for_terminal_shows_control_characters_instead_of_sending_them() -> None:
    assert for_terminal("a\x1b[31mred\x07\x9b2J\nnext\tcol") == "a␛[31mred␇\\u009b2J\nnext\tcol"
    assert for_terminal("plain\r\n") == "plain\r\n"


# --- ls, find, grep ---------------------------------------------------------------------------


def test_ls_shows_every_odd_name_escaped_on_one_line_each(odd_tree: Path) -> None:
    out = text(LsTool(), odd_tree)
    listing, note = out.split("\n\n")
    assert sorted(listing.split("\n")) == sorted([*SHOWN, "zzz.txt", "dir\\xfe/"])
    assert note == f"[{ESCAPED_NAMES_NOTE}]"
    assert "Output cut" not in out  # 87 bytes were once reported as "cut at 50.0 KB"


def test_ls_of_ordinary_names_has_no_note(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    make(tmp_path / "plain", b"a.txt")
    assert text(LsTool(), tmp_path / "plain") == "a.txt"


def test_ls_takes_an_escaped_folder_name_back(odd_tree: Path) -> None:
    assert text(LsTool(), odd_tree, path="dir\\xfe") == "inner.txt"


def test_find_shows_odd_paths_escaped_and_keeps_the_last_entry(odd_tree: Path) -> None:
    out = text(FindTool(), odd_tree, pattern="*")
    listing, note = out.split("\n\n")
    assert set(listing.split("\n")) == {*SHOWN, "zzz.txt", "dir\\xfe/", "dir\\xfe/inner.txt"}
    assert note == f"[{ESCAPED_NAMES_NOTE}]"


def test_grep_shows_odd_paths_escaped_with_both_backends(odd_tree: Path, backend: str) -> None:
    make(odd_tree, b"latin.txt", b"hello caf\xe9 \x1b[1mbold\n")
    out = text(GrepTool(), odd_tree, pattern="hello")
    lines = out.split("\n\n")[0].split("\n")
    paths = {line.rsplit(":1:", 1)[0] for line in lines}
    assert paths == {*SHOWN, "zzz.txt", "dir\\xfe/inner.txt", "latin.txt"}
    assert "latin.txt:1:hello caf\ufffd \x1b[1mbold" in lines  # content is text: U+FFFD, data kept
    assert out.endswith(f"[{ESCAPED_NAMES_NOTE}]")


def test_grep_in_one_escaped_file(odd_tree: Path, backend: str) -> None:
    out = text(GrepTool(), odd_tree, pattern="hello", path="bad\\xffname.txt")
    assert out.startswith("bad\\xffname.txt:1:hello")


# --- the name given back ---------------------------------------------------------------------


def test_read_edit_and_write_accept_the_escaped_name(odd_tree: Path) -> None:
    real = Path(os.fsdecode(os.fsencode(odd_tree) + b"/bad\xffname.txt"))
    assert text(ReadTool(), odd_tree, path="bad\\xffname.txt") == "     1\thello"
    text(EditTool(), odd_tree, path="bad\\xffname.txt", edits=[{"oldText": "hello", "newText": "bye"}])
    assert real.read_bytes() == b"bye\n"
    text(WriteTool(), odd_tree, path="two\\nlines\\nname.txt", content="new\n")
    assert Path(os.fsdecode(os.fsencode(odd_tree) + b"/two\nlines\nname.txt")).read_bytes() == b"new\n"
    text(WriteTool(), odd_tree, path="dir\\xfe/created.txt", content="x")
    assert (Path(os.fsdecode(os.fsencode(odd_tree) + b"/dir\xfe")) / "created.txt").read_bytes() == b"x"
    assert not (odd_tree / "two\\nlines\\nname.txt").exists()  # no file named with the escapes
    assert not (odd_tree / "dir\\xfe").exists()


def test_a_real_backslash_name_and_a_byte_name_are_shown_apart_and_both_reachable(tmp_path: Path) -> None:
    (tmp_path / "lit\\xffname").write_text("literal\n")  # a name with a real backslash
    make(tmp_path, b"lit\xffname", b"byte\n")
    shown = sorted(line for line in text(LsTool(), tmp_path).split("\n") if line.startswith("lit"))
    assert shown == ["lit\\\\xffname", "lit\\xffname"]
    assert text(ReadTool(), tmp_path, path="lit\\xffname") == "     1\tbyte"
    assert text(ReadTool(), tmp_path, path="lit\\\\xffname") == "     1\tliteral"


# --- output and prompts ----------------------------------------------------------------------


def test_bash_output_with_invalid_bytes_is_text_with_replacement_characters(tmp_path: Path) -> None:
    out = text(BashTool(), tmp_path, command=r"printf 'a\xff\xfeb\n'")
    assert out == "a\ufffd\ufffdb\n"


def test_read_names_a_missing_path_in_an_odd_folder_escaped(tmp_path: Path) -> None:
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/odd\xff"))
    folder.mkdir()
    with pytest.raises(Exception) as info:
        run(ReadTool(), folder, path="missing.txt")
    assert "odd\\xff/missing.txt" in str(info.value)
    orjson.dumps(str(info.value))


def test_clean_result_leaves_no_surrogate_in_text_or_details() -> None:
    result = ToolResult([TextContent(text="x\udcff")], {"diff": ["-\udcfe"], "\udcfd": 1})
    cleaned = clean_result(result)
    assert orjson.loads(orjson.dumps([block.text for block in cleaned.content])) == ["x\ufffd"]
    assert cleaned.details == {"diff": ["-\ufffd"], "\ufffd": 1}


def test_user_messages_never_hold_lone_surrogates() -> None:
    message = user_message("hi \udcff there")
    assert message.content[0].text == "hi \ufffd there"  # type: ignore[union-attr]


def test_attachments_with_odd_names_and_latin1_content(tmp_path: Path) -> None:
    make(tmp_path, b"bad\xffname.txt", b"caf\xe9\n")
    words = [os.fsdecode(b"@bad\xffname.txt"), os.fsdecode(b"say \xff hi")]
    (prompt,) = build_prompts(words, tmp_path)
    shown = show_name(tmp_path.resolve() / os.fsdecode(b"bad\xffname.txt"))
    assert prompt.text == f'<file name="{shown}">\ncaf\ufffd\n\n</file>\nsay \ufffd hi'
    orjson.dumps(prompt.text)
