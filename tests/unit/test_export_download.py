"""The session bytes behind the export page's JSONL download (pi_tui/html_export/context.py):
the file as it is, entries not yet written after it, a new session as the file it would be,
and secrets hidden line by line (the page is made to be passed around)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

from pi_tui.html_export.context import (
    PromptContext,
    base64_chunks,
    context_block,
    jsonl_pieces,
    packed_chunks,
)
from pi_tui.secrets.entries import SecretEntry
from pi_tui.secrets.obfuscator import Obfuscator
from pi_tui.session import SessionManager
from tests.support.builders import assistant, user

SECRET = "sk-live-0123456789abcdef"


def hider(*values: str) -> Obfuscator:
    return Obfuscator(b"k" * 32, {value: SecretEntry("plain", value, "obfuscate") for value in values})


def test_base64_in_pieces_is_base64_of_the_whole() -> None:
    data = bytes(range(256)) * 50
    for sizes in ([1, 2, 3, 4, 5, 7, 11], [3000], [1] * 40, [2, 2, 2]):
        pieces, at = [], 0
        for size in sizes:
            pieces.append(data[at : at + size])
            at += size
        pieces.append(data[at:])
        assert b"".join(base64_chunks(pieces)) == base64.b64encode(data)
    assert b"".join(base64_chunks([])) == b""


def test_packed_is_gzip_of_the_whole_in_base64() -> None:
    data = b"".join(b'{"line":%d,"text":"caf\xc3\xa9 \xff"}\n' % number for number in range(20000))
    pieces = [data[at : at + 7777] for at in range(0, len(data), 7777)]
    packed = base64.b64decode(b"".join(packed_chunks(pieces)))
    assert gzip.decompress(packed) == data
    assert len(packed) < len(data) / 5
    assert gzip.decompress(base64.b64decode(b"".join(packed_chunks([])))) == b""


def test_a_written_file_comes_back_byte_for_byte(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    manager.append_message(user("caf\u00e9 </script>"))
    manager.append_message(assistant("ok"))
    manager.flush()
    assert manager.session_file is not None
    with manager.session_file.open("ab") as stream:  # a hand edit no encoder would write back
        stream.write(
            b'{"type":"custom", "customType":"x","id":"c1","parentId":null,"timestamp":"t","data":1}\n'
        )
    opened = SessionManager.open(manager.session_file, read_only=True)
    assert b"".join(jsonl_pieces(opened, None)) == manager.session_file.read_bytes()


def test_a_session_not_written_yet_is_the_file_it_would_be(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(user("first"))
    lines = b"".join(jsonl_pieces(manager, None)).decode().splitlines()
    header, entry = (json.loads(line) for line in lines)
    assert (
        header["type"] == "session" and header["id"] == manager.session_id and header["cwd"] == str(tmp_path)
    )
    assert entry["type"] == "message" and entry["message"]["role"] == "user" and "first" in json.dumps(entry)


def test_secrets_are_hidden_and_other_lines_kept(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    manager.append_message(user(f"my key is {SECRET}"))
    manager.append_message(assistant("noted"))
    manager.flush()
    assert manager.session_file is not None
    original = manager.session_file.read_bytes().splitlines(keepends=True)
    shown = b"".join(jsonl_pieces(manager, hider(SECRET))).splitlines(keepends=True)
    assert len(shown) == len(original)
    assert SECRET.encode() not in b"".join(shown)
    changed = [index for index, (one, other) in enumerate(zip(shown, original, strict=True)) if one != other]
    assert len(changed) == 1 and SECRET.encode() in original[changed[0]]
    assert json.loads(shown[changed[0]])["id"] == json.loads(original[changed[0]])["id"]


def test_the_prompt_block_hides_secrets_and_yields_to_pi1_system_messages(tmp_path: Path) -> None:
    context = PromptContext(f"Use {SECRET} for the API.", [])
    block = context_block(context, [], hider(SECRET))
    assert block is not None and SECRET not in block["systemPrompt"]
    system = {"type": "message", "message": {"role": "system", "content": "own prompt"}}
    assert context_block(context, [system], None) is None
    assert context_block(PromptContext(), [], None) is None
    assert context_block(None, [], None) is None
