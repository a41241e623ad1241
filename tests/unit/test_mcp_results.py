"""MCP results as the model reads them: each content kind, errors, the 20 KB cut, saved files.

Built from real ``mcp.types`` objects, as the SDK hands them over. The cut positions and
``…N chars truncated…`` counts were worked out from pi 1.5.2's rule (10 KB from each end, cut at
UTF-8 character starts) and checked against pi's own function for the same text.
"""

from __future__ import annotations

import base64
import json
import math
import re
import stat
import tempfile
from pathlib import Path

import mcp.types as mt
import pytest

from pi_tui.mcp.results import MAX_TEXT_BYTES, convert_resource_contents, convert_result, is_mcp_app
from pi_tui.messages import ImageContent, TextContent

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
MARKER = re.compile(r"…(\d+) chars truncated…")


def call(
    *blocks: mt.ContentBlock, is_error: bool = False, structured: dict | None = None
) -> mt.CallToolResult:
    return mt.CallToolResult(content=list(blocks), isError=is_error, structuredContent=structured)


def texts(result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def saved_path(text: str) -> Path:
    found = re.search(r"(/\S+pi-tui-mcp-\S+?\.[A-Za-z0-9]+)\b", text)
    assert found, text
    return Path(found.group(1))


def test_text_and_image_blocks_pass_through_in_order(tmp_path: Path) -> None:
    result = convert_result(
        "srv",
        "snap",
        call(
            mt.TextContent(type="text", text="before"),
            mt.ImageContent(type="image", data=PNG, mimeType="image/png"),
            mt.TextContent(type="text", text="after"),
        ),
        readable_resources=False,
        output_dir=tmp_path / "out",
    )
    assert result.content == [
        TextContent(text="before"),
        ImageContent(data=PNG, mime_type="image/png"),
        TextContent(text="after"),
    ]
    assert result.details == {"server": "srv", "tool": "snap"}
    assert result.is_error is False
    assert not (tmp_path / "out").exists()


def test_audio_becomes_a_line_naming_it() -> None:
    result = convert_result(
        "srv",
        "say",
        call(mt.AudioContent(type="audio", data="AAAA", mimeType="audio/wav")),
        readable_resources=False,
    )
    [line] = texts(result)
    assert "audio" in line
    assert "audio/wav" in line
    assert "AAAA" not in line


def test_resource_link_names_uri_title_type_size_description_and_reader() -> None:
    link = mt.ResourceLink(
        type="resource_link",
        uri="file:///project/notes.md",
        name="notes",
        title="Project notes",
        mimeType="text/markdown",
        size=1536,
        description="What we decided",
    )
    [line] = texts(convert_result("docs-srv", "find", call(link), readable_resources=True))
    assert "\n" not in line
    for part in ("file:///project/notes.md", '"Project notes"', "text/markdown", "1.5KB", "What we decided"):
        assert part in line
    assert 'read_mcp_resource with server "docs-srv"' in line

    [unreadable] = texts(convert_result("docs-srv", "find", call(link), readable_resources=False))
    assert "read_mcp_resource" not in unreadable
    assert "file:///project/notes.md" in unreadable


def test_resource_link_without_title_uses_its_name() -> None:
    link = mt.ResourceLink(type="resource_link", uri="test://static/resource/7", name="Resource 7")
    [line] = texts(convert_result("s", "t", call(link), readable_resources=False))
    assert '"Resource 7"' in line
    assert "test://static/resource/7" in line
    assert "(" not in line  # no type or size given, so no brackets for them


def test_embedded_text_resource_is_its_text() -> None:
    block = mt.EmbeddedResource(
        type="resource",
        resource=mt.TextResourceContents(uri="test://r/1", mimeType="text/plain", text="resource text"),
    )
    assert texts(convert_result("s", "t", call(block), readable_resources=False)) == ["resource text"]


@pytest.mark.parametrize(
    "mime_type",
    [
        "text/csv",
        "application/json",
        "application/json; charset=utf-8",
        "application/ld+json",
        "application/atom+xml",
    ],
)
def test_embedded_text_like_blob_is_decoded(mime_type: str) -> None:
    blob = base64.b64encode("héllo, world".encode()).decode()
    block = mt.EmbeddedResource(
        type="resource", resource=mt.BlobResourceContents(uri="test://r/2", mimeType=mime_type, blob=blob)
    )
    result = convert_result("s", "t", call(block), readable_resources=False)
    assert result.content == [TextContent(text="héllo, world")]


def test_embedded_image_blob_is_an_image() -> None:
    block = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(uri="test://r/3.png", mimeType="image/png", blob=PNG),
    )
    result = convert_result("s", "t", call(block), readable_resources=False)
    assert result.content == [ImageContent(data=PNG, mime_type="image/png")]


def test_other_binary_resource_is_saved_to_a_private_file(tmp_path: Path) -> None:
    data = bytes(range(256)) * 8
    block = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(
            uri="test://bundle/archive.zip", mimeType="application/zip", blob=base64.b64encode(data).decode()
        ),
    )
    [line] = texts(convert_result("s", "t", call(block), readable_resources=False, output_dir=tmp_path))
    path = saved_path(line)
    assert path.parent == tmp_path
    assert path.name.startswith("pi-tui-mcp-")
    assert path.suffix == ".zip"
    assert path.read_bytes() == data
    assert mode(path) == 0o600
    assert "test://bundle/archive.zip" in line
    assert "application/zip" in line
    assert "2.0KB" in line


def test_binary_resource_without_extension_gets_bin(tmp_path: Path) -> None:
    block = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(uri="test://blob/9", blob=base64.b64encode(b"\0\1").decode()),
    )
    [line] = texts(convert_result("s", "t", call(block), readable_resources=False, output_dir=tmp_path))
    assert saved_path(line).suffix == ".bin"
    assert saved_path(line).read_bytes() == b"\0\1"


def test_no_blocks_shows_structured_content_as_json() -> None:
    structured = {"sum": 5, "name": "ünïcode", "items": [1, 2]}
    result = convert_result("s", "add", call(structured=structured), readable_resources=False)
    [line] = texts(result)
    assert json.loads(line) == structured
    assert "ünïcode" in line  # not \u-escaped


def test_structured_content_is_not_added_when_there_are_blocks() -> None:
    result = convert_result(
        "s",
        "add",
        call(mt.TextContent(type="text", text="5"), structured={"sum": 5}),
        readable_resources=False,
    )
    assert texts(result) == ["5"]


def test_is_error_marks_the_result_and_keeps_the_servers_text() -> None:
    result = convert_result(
        "s", "t", call(mt.TextContent(type="text", text="bad input"), is_error=True), readable_resources=False
    )
    assert result.is_error is True
    assert texts(result) == ["bad input"]


def test_is_error_without_text_says_which_tool_failed() -> None:
    result = convert_result("my-srv", "explode", call(is_error=True), readable_resources=False)
    assert result.is_error is True
    [line] = texts(result)
    assert "my-srv/explode" in line


def test_text_of_exactly_20_kb_is_kept_whole(tmp_path: Path) -> None:
    text = "x" * MAX_TEXT_BYTES
    result = convert_result(
        "s",
        "t",
        call(mt.TextContent(type="text", text=text)),
        readable_resources=False,
        output_dir=tmp_path / "out",
    )
    assert texts(result) == [text]
    assert "fullOutputPath" not in result.details
    assert not (tmp_path / "out").exists()


def test_long_text_keeps_both_ends_and_saves_the_whole(tmp_path: Path) -> None:
    lines = [f"line {index:05d} " + "." * 40 for index in range(700)]
    first = "\n".join(lines[:350])
    second = "\n".join(lines[350:]) + "\n"
    whole = first + "\n" + second
    size = len(whole.encode())
    assert size > MAX_TEXT_BYTES
    result = convert_result(
        "srv",
        "dump",
        call(
            mt.TextContent(type="text", text=first),
            mt.ImageContent(type="image", data=PNG, mimeType="image/png"),
            mt.TextContent(type="text", text=second),
        ),
        readable_resources=False,
        output_dir=tmp_path,
    )
    assert len(result.content) == 2
    assert result.content[1] == ImageContent(data=PNG, mime_type="image/png")
    text = result.content[0].text
    head_line, rest = text.split("\n", 1)
    assert str(math.ceil(size / 4)) in head_line
    assert "700" in head_line  # the final newline ends line 700 rather than starting a 701st
    marker = MARKER.search(rest)
    assert marker is not None
    assert int(marker.group(1)) == size - MAX_TEXT_BYTES  # all ASCII: chars == bytes
    assert rest[: marker.start()] == "\n" + whole[: MAX_TEXT_BYTES // 2]
    after = rest[marker.end() :]
    assert after.startswith(whole[-MAX_TEXT_BYTES // 2 :])
    path = Path(result.details["fullOutputPath"])
    assert result.details["server"] == "srv"
    assert result.details["tool"] == "dump"
    assert str(path) in after[MAX_TEXT_BYTES // 2 :]
    assert path.parent == tmp_path
    assert path.name.startswith("pi-tui-mcp-")
    assert path.read_text() == whole
    assert mode(path) == 0o600


def test_cuts_fall_on_character_boundaries(tmp_path: Path) -> None:
    # 7000 three-byte characters: 21000 bytes. The head may not end inside a character at
    # byte 10240, so it ends at 10239 (3413 chars); the tail starts at 10761 (3413 chars).
    whole = "€" * 7000
    result = convert_result(
        "s", "t", call(mt.TextContent(type="text", text=whole)), readable_resources=False, output_dir=tmp_path
    )
    text = result.content[0].text
    assert "5250" in text.split("\n", 1)[0]
    marker = MARKER.search(text)
    assert marker is not None
    assert marker.group(1) == "174"
    assert re.search(r"\n(€+)…", text).group(1) == "€" * 3413
    assert re.search(r"…(€+)", text).group(1) == "€" * 3413


def test_one_byte_over_is_cut(tmp_path: Path) -> None:
    result = convert_result(
        "s",
        "t",
        call(mt.TextContent(type="text", text="y" * (MAX_TEXT_BYTES + 1))),
        readable_resources=False,
        output_dir=tmp_path,
    )
    text = result.content[0].text
    assert MARKER.search(text).group(1) == "1"
    assert "5121" in text.split("\n", 1)[0]  # 20481 / 4 rounded up


def test_saved_text_goes_to_the_system_temp_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = convert_result(
        "s", "t", call(mt.TextContent(type="text", text="z" * 30000)), readable_resources=False
    )
    path = Path(result.details["fullOutputPath"])
    assert path.parent == tmp_path
    assert path.read_text() == "z" * 30000


def test_unwritable_folder_still_gives_the_cut_text(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    result = convert_result(
        "s",
        "t",
        call(mt.TextContent(type="text", text="z" * 30000)),
        readable_resources=False,
        output_dir=blocker,
    )
    assert "fullOutputPath" not in result.details
    [text] = texts(result)
    assert MARKER.search(text)
    assert "could not be saved" in text


def test_read_resource_text_image_and_binary(tmp_path: Path) -> None:
    result = convert_resource_contents(
        "srv",
        "test://dir",
        [
            mt.TextResourceContents(uri="test://dir/a.txt", mimeType="text/plain", text="alpha"),
            mt.BlobResourceContents(uri="test://dir/b.png", mimeType="image/png", blob=PNG),
            mt.BlobResourceContents(
                uri="test://dir/c.dat",
                mimeType="application/octet-stream",
                blob=base64.b64encode(b"\x00c").decode(),
            ),
        ],
        output_dir=tmp_path,
    )
    assert result.content[:4] == [
        TextContent(text="test://dir/a.txt:"),
        TextContent(text="alpha"),
        TextContent(text="test://dir/b.png:"),
        ImageContent(data=PNG, mime_type="image/png"),
    ]
    assert result.content[4] == TextContent(text="test://dir/c.dat:")
    path = saved_path(result.content[5].text)
    assert path.read_bytes() == b"\x00c"
    assert path.suffix == ".dat"
    assert mode(path) == 0o600
    assert result.details == {"server": "srv", "tool": "read_mcp_resource"}
    assert result.is_error is False


def test_read_single_resource_has_no_uri_label() -> None:
    result = convert_resource_contents(
        "srv", "test://one", [mt.TextResourceContents(uri="test://one", text="only")]
    )
    assert result.content == [TextContent(text="only")]


def test_read_resource_leaves_out_mcp_apps() -> None:
    contents = [
        mt.TextResourceContents(uri="ui://widget/main", mimeType="text/html", text="<b>app</b>"),
        mt.TextResourceContents(
            uri="test://page", mimeType='text/html; profile="mcp-app"', text="<i>app</i>"
        ),
        mt.TextResourceContents(uri="test://plain", mimeType="text/html", text="<p>page</p>"),
    ]
    result = convert_resource_contents("srv", "test://x", contents)
    assert result.content == [TextContent(text="<p>page</p>")]

    apps_only = convert_resource_contents("srv", "ui://widget/main", contents[:1])
    [line] = texts(apps_only)
    assert "<b>app</b>" not in line
    assert "ui://widget/main" in line


def test_read_empty_resource_says_so() -> None:
    [line] = texts(convert_resource_contents("srv", "test://empty", []))
    assert "test://empty" in line


def test_read_resource_long_text_is_cut_and_saved(tmp_path: Path) -> None:
    whole = "r" * 50000
    result = convert_resource_contents(
        "srv", "test://big", [mt.TextResourceContents(uri="test://big", text=whole)], output_dir=tmp_path
    )
    assert MARKER.search(result.content[0].text).group(1) == str(50000 - MAX_TEXT_BYTES)
    assert Path(result.details["fullOutputPath"]).read_text() == whole
    assert result.details["tool"] == "read_mcp_resource"


def test_is_mcp_app() -> None:
    assert is_mcp_app("ui://x", None)
    assert is_mcp_app("https://x", "text/html;profile=mcp-app")
    assert is_mcp_app("https://x", "text/html; PROFILE = mcp-app")
    assert not is_mcp_app("https://x", "text/html")
    assert not is_mcp_app("https://ui://x", None)
