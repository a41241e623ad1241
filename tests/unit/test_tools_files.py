"""read, write, edit and the helpers under them, on real files in ``tmp_path``."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.messages import ImageContent, TextContent
from pi_tui.tools import (
    ALL_TOOL_NAMES,
    ToolContext,
    ToolError,
    ToolResult,
    all_tools,
    default_tools,
    tools_by_name,
)
from pi_tui.tools.diff import line_diff
from pi_tui.tools.edit import EditTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.truncation import MAX_BYTES, truncate_head, truncate_tail
from pi_tui.tools.write import WriteTool

PI_SESSIONS = Path(__file__).parents[1] / "data" / "pi-sessions"
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def run(tool: Any, cwd: Path, **args: Any) -> ToolResult:
    return asyncio.run(tool.execute("call_1", args, ToolContext(cwd=cwd)))


def fails(tool: Any, cwd: Path, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        run(tool, cwd, **args)
    return str(info.value)


def text_of(result: ToolResult) -> str:
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


# --- registry --------------------------------------------------------------------------------


def test_default_and_all_tools(tmp_path: Path) -> None:
    assert [tool.name for tool in default_tools(tmp_path)] == ["read", "bash", "edit", "write"]
    assert [tool.name for tool in all_tools(tmp_path)] == [
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
    ]
    assert [tool.name for tool in tools_by_name(["ls", "read", "ls"], tmp_path)] == ["ls", "read"]


def test_unknown_tool_name_is_a_clear_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Unknown tool: grpe\. Available tools: read, bash"):
        tools_by_name(["read", "grpe"], tmp_path)


@pytest.mark.parametrize("name", ALL_TOOL_NAMES)
def test_every_tool_describes_itself_for_the_model(name: str, tmp_path: Path) -> None:
    (tool,) = tools_by_name([name], tmp_path)
    assert tool.label and len(tool.description) > 40
    schema = tool.parameters
    assert schema["type"] == "object"
    assert set(schema["required"]) <= set(schema["properties"])
    assert all(prop.get("description") for prop in schema["properties"].values())
    json.dumps(schema)  # goes over the wire as is


# --- truncation ------------------------------------------------------------------------------


def test_truncate_head_by_lines_and_bytes() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 3001))
    cut = truncate_head(text)
    assert cut.truncated and cut.truncated_by == "lines"
    assert cut.output_lines == 2000 and cut.total_lines == 3000
    assert cut.content.endswith("line 2000")

    wide = "\n".join("x" * 99 for _ in range(1000))  # 100 KB in 1000 lines
    cut = truncate_head(wide)
    assert cut.truncated_by == "bytes" and cut.output_bytes <= MAX_BYTES
    assert cut.output_lines == MAX_BYTES // 100

    assert not truncate_head("a\nb\n").truncated
    assert truncate_head("y" * (MAX_BYTES + 1)).first_line_exceeds_limit


def test_truncate_tail_keeps_the_end() -> None:
    text = "".join(f"{i}\n" for i in range(1, 5001))
    cut = truncate_tail(text)
    assert cut.truncated_by == "lines" and cut.total_lines == 5000
    assert cut.content.startswith("3001\n") and cut.content.endswith("5000\n")

    one_line = "é" * MAX_BYTES  # 2 bytes a character: the cut falls mid-line, never mid-character
    cut = truncate_tail(one_line)
    assert cut.last_line_partial and cut.truncated_by == "bytes"
    assert set(cut.content) == {"é"} and len(cut.content.encode()) <= MAX_BYTES


# --- read ------------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\r\n\ngamma")
    result = run(ReadTool(), tmp_path, path="a.txt")
    assert text_of(result) == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
    assert result.details is None


def test_read_offset_limit_and_note_to_continue(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    text = text_of(run(ReadTool(), tmp_path, path="a.txt", offset=3, limit=2))
    lines, note = text.split("\n\n")
    assert lines == "     3\tl3\n     4\tl4"
    assert "offset=5" in note and "6 more lines" in note
    assert text_of(run(ReadTool(), tmp_path, path="a.txt", offset=9)) == "     9\tl9\n    10\tl10"


def test_read_cuts_at_2000_lines_and_continues(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 2501)))
    first = run(ReadTool(), tmp_path, path="big.txt")
    body, note = text_of(first).split("\n\n")
    assert body.count("\n") == 1999 and body.endswith("  2000\trow 2000")
    assert "1-2000 of 2500" in note and "offset=2001" in note
    assert first.details["truncation"]["truncatedBy"] == "lines"

    rest = text_of(run(ReadTool(), tmp_path, path="big.txt", offset=2001))
    assert rest.startswith("  2001\trow 2001") and rest.endswith("  2500\trow 2500")


def test_read_cuts_at_50_kb(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("".join("z" * 200 + "\n" for _ in range(600)))
    result = run(ReadTool(), tmp_path, path="wide.txt")
    body, note = text_of(result).split("\n\n")
    shown = body.count("\n") + 1
    assert len(body.encode()) <= MAX_BYTES and shown < 600
    assert f"offset={shown + 1}" in note and "50.0 KB" in note


def test_read_single_line_over_the_limit_points_to_bash(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * (MAX_BYTES * 2))
    text = text_of(run(ReadTool(), tmp_path, path="min.js"))
    assert "Line 1" in text and "sed -n '1p'" in text


def test_read_image_by_magic_bytes(tmp_path: Path) -> None:
    (tmp_path / "pic.dat").write_bytes(PNG_1x1)  # the extension says nothing
    result = run(ReadTool(), tmp_path, path="pic.dat")
    assert len(result.content) == 2
    assert "image/png" in text_of(result)
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == PNG_1x1

    (tmp_path / "photo.png").write_bytes(b"\xff\xd8\xff\xe0" + bytes(64))
    assert run(ReadTool(), tmp_path, path="photo.png").content[1].mime_type == "image/jpeg"


def test_read_paths_absolute_and_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("hi\n")
    monkeypatch.setenv("HOME", str(home))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert text_of(run(ReadTool(), elsewhere, path="~/notes.md")).endswith("\thi")
    assert text_of(run(ReadTool(), elsewhere, path=str(home / "notes.md"))).endswith("\thi")
    assert text_of(run(ReadTool(), home, path="@notes.md")).endswith("\thi")


def test_read_errors(tmp_path: Path) -> None:
    assert "not found" in fails(ReadTool(), tmp_path, path="nope.txt")
    (tmp_path / "folder").mkdir()
    assert "is a directory" in fails(ReadTool(), tmp_path, path="folder")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02garbage")
    assert "binary" in fails(ReadTool(), tmp_path, path="blob.bin")
    (tmp_path / "short.txt").write_text("one\ntwo\n")
    message = fails(ReadTool(), tmp_path, path="short.txt", offset=5)
    assert "Offset 5" in message and "2 lines" in message
    assert '"read":\n  - path: Field required' in fails(ReadTool(), tmp_path)  # pi's wording
    assert "limit" in fails(ReadTool(), tmp_path, path="short.txt", limit="many")


def test_read_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("")
    assert "empty" in text_of(run(ReadTool(), tmp_path, path="empty"))


# --- write -----------------------------------------------------------------------------------


def test_write_creates_parents_and_counts_bytes(tmp_path: Path) -> None:
    result = run(WriteTool(), tmp_path, path="deep/er/notes.md", content="héllo\r\n")
    assert (tmp_path / "deep/er/notes.md").read_bytes() == "héllo\r\n".encode()
    assert text_of(result) == "Wrote 8 bytes to deep/er/notes.md"
    assert result.details is None
    run(WriteTool(), tmp_path, path="deep/er/notes.md", content="")
    assert (tmp_path / "deep/er/notes.md").read_bytes() == b""


def test_bad_arguments_are_named_the_pi_way_and_common_slips_are_taken(tmp_path: Path) -> None:
    """Every problem on its own line with the arguments echoed (pi's shape); ``"2"`` for a number
    and ``""`` for an omitted option still work, as before."""
    (tmp_path / "short.txt").write_text("a\nb\nc\n")
    message = fails(ReadTool(), tmp_path, path="", offset=True, limit=0)
    assert message.startswith('Validation failed for tool "read":\n  - path: ')
    assert "\n  - offset: " in message and "\n  - limit: " in message
    assert message.endswith('Received arguments:\n{\n  "path": "",\n  "offset": true,\n  "limit": 0\n}')
    assert (
        text_of(run(ReadTool(), tmp_path, path="short.txt", offset="2", limit="")) == "     2\tb\n     3\tc"
    )


def test_write_errors(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    assert "directory" in fails(WriteTool(), tmp_path, path="folder", content="x")
    (tmp_path / "file").write_text("x")
    assert "is a file" in fails(WriteTool(), tmp_path, path="file/child.txt", content="x")
    assert '"write":\n  - content: Field required' in fails(WriteTool(), tmp_path, path="a.txt")


# --- edit ------------------------------------------------------------------------------------

APP = "".join(
    [
        "def greet(name):\n",
        '    return "Hello, " + name\n',
        "\n",
        "\n",
        'if __name__ == "__main__":\n',
        '    print(greet("world"))\n',
    ]
)


def test_edit_matches_the_result_pi_recorded(tmp_path: Path) -> None:
    """Same file and edit as the 02-tool-calls fixture: the details must be identical."""
    expected = None
    for line in (PI_SESSIONS / "02-tool-calls" / "session.jsonl").read_text().splitlines():
        message = json.loads(line).get("message", {})
        if (
            message.get("role") == "toolResult"
            and message.get("toolName") == "edit"
            and not message["isError"]
        ):
            expected = message["details"]
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text(APP)
    result = run(
        EditTool(), tmp_path, path="src/app.py", edits=[{"oldText": '"Hello, "', "newText": '"Hi, "'}]
    )
    assert result.details == expected
    assert (tmp_path / "src/app.py").read_text() == APP.replace("Hello", "Hi")
    assert "1 edit" in text_of(result)


def test_edit_several_disjoint_edits_against_the_original(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    # The second oldText only exists in the original text, not after the first edit.
    edits = [{"oldText": "a = 1", "newText": "b = 2"}, {"oldText": "b = 2\n", "newText": "b = 20\n"}]
    result = run(EditTool(), tmp_path, path="f.txt", edits=edits)
    assert path.read_text() == "b = 2\nb = 20\nc = 3\n"
    assert "2 edits" in text_of(result)
    assert result.details["firstChangedLine"] == 1
    assert result.details["diff"] == "-1 a = 1\n 2 b = 2\n+2 b = 20\n 3 c = 3"


def test_edit_not_found_and_ambiguous(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("x = 1\nx = 1\n  y = 2\n")
    message = fails(EditTool(), tmp_path, path="f.py", edits=[{"oldText": "y = 3", "newText": "z"}])
    assert "not found" in message and "whitespace" in message
    message = fails(EditTool(), tmp_path, path="f.py", edits=[{"oldText": "x = 1", "newText": "z"}])
    assert "2 times" in message and "lines 1, 2" in message and "surrounding" in message
    assert path.read_text() == "x = 1\nx = 1\n  y = 2\n"


def test_edit_is_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\ntwo\n")
    edits = [{"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}]
    assert "edits[1]" in fails(EditTool(), tmp_path, path="f.txt", edits=edits)
    assert path.read_text() == "one\ntwo\n"


def test_edit_rejects_overlap_empty_and_no_change(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abcdef\n")
    overlap = [{"oldText": "abcd", "newText": "X"}, {"oldText": "cdef", "newText": "Y"}]
    message = fails(EditTool(), tmp_path, path="f.txt", edits=overlap)
    assert "overlap" in message and "edits[0]" in message and "edits[1]" in message
    assert "empty" in fails(EditTool(), tmp_path, path="f.txt", edits=[{"oldText": "", "newText": "x"}])
    assert "No change" in fails(
        EditTool(), tmp_path, path="f.txt", edits=[{"oldText": "abc", "newText": "abc"}]
    )
    assert "not found" in fails(
        EditTool(), tmp_path, path="nope.txt", edits=[{"oldText": "a", "newText": "b"}]
    )
    assert "edits" in fails(EditTool(), tmp_path, path="f.txt", edits=[])
    assert (tmp_path / "f.txt").read_text() == "abcdef\n"


def test_edit_keeps_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\nline three\r\n")
    # The model sends LF text; it must still match and the file must keep CRLF and the BOM.
    run(
        EditTool(),
        tmp_path,
        path="win.txt",
        edits=[{"oldText": "one\nline two", "newText": "1\nline 2\nextra"}],
    )
    assert path.read_bytes() == b"\xef\xbb\xbfline 1\r\nline 2\r\nextra\r\nline three\r\n"


def test_edit_keeps_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9\nold\n")
    run(EditTool(), tmp_path, path="latin1.txt", edits=[{"oldText": "old", "newText": "new"}])
    assert path.read_bytes() == b"caf\xe9\nnew\n"


def test_edit_accepts_the_older_single_edit_form(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello world\n")
    result = run(EditTool(), tmp_path, path="f.txt", oldText="world", newText="there")
    assert (tmp_path / "f.txt").read_text() == "hello there\n"
    assert result.details["diff"] == "-1 hello world\n+1 hello there"
    run(EditTool(), tmp_path, path="f.txt", edits=json.dumps([{"oldText": "there", "newText": "you"}]))
    assert (tmp_path / "f.txt").read_text() == "hello you\n"


def test_diff_folds_long_unchanged_stretches() -> None:
    old = "".join(f"{i}\n" for i in range(1, 31))
    new = old.replace("3\n", "three\n", 1).replace("27\n", "twenty-seven\n")
    diff = line_diff(old, new)
    assert diff.first_changed_line == 3
    lines = diff.text.split("\n")
    assert lines[:4] == ["  1 1", "  2 2", "- 3 3", "+ 3 three"]
    assert "    ..." in lines
    assert lines[-5:] == ["-27 27", "+27 twenty-seven", " 28 28", " 29 29", " 30 30"]
    assert len(lines) == 4 + 4 + 1 + 4 + 5
