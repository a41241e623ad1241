"""The session index gives what ``session_info`` gives, reading only what changed."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_tui.config.paths import CACHE_DIR_ENV
from pi_tui.session import index
from pi_tui.session.index import TextSearch, index_file, indexed_sessions
from pi_tui.session.info import SessionInfo, session_info
from pi_tui.session.listing import list_all_sessions, list_sessions, session_files
from tests.conftest import DATA
from tests.support.waiting import wait_until

FIELDS = (
    "path",
    "id",
    "cwd",
    "name",
    "parent_session",
    "created",
    "modified",
    "message_count",
    "first_message",
)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every (file name, offset) the index reads a session file from."""
    seen: list[tuple[str, int]] = []
    monkeypatch.setattr(index, "on_read", lambda path, offset: seen.append((path.name, offset)))
    return seen


def searchable(text: str) -> str:
    return " ".join(text.split()).lower()


def assert_same_as_session_info(folder: Path) -> int:
    """The index's list of ``folder`` agrees with ``session_info`` of each file; how many sessions."""
    listed = {info.path: info for info in list_sessions(folder)}
    expected = {path: info for path in session_files(folder) if (info := session_info(path)) is not None}
    assert listed.keys() == expected.keys()
    for path, want in expected.items():
        got = listed[path]
        for name in FIELDS:
            assert getattr(got, name) == getattr(want, name), f"{path.name}: {name}"
        text, full = got.all_messages_text, searchable(want.all_messages_text)
        if len(full) <= index.HEAD_CHARS:
            assert text == full, path.name
        else:  # bounded: the start and the end of the text are kept
            assert len(text) <= index.HEAD_CHARS + index.TAIL_CHARS + 1
            assert text[:500] in full and text[-500:] in full, path.name
    return len(expected)


def fixture_folders() -> list[Path]:
    roots = [DATA / "odd-sessions", DATA / "pi-sessions"]
    return sorted({path.parent for root in roots if root.is_dir() for path in root.rglob("*.jsonl")})


def test_same_answers_as_session_info_on_every_fixture_folder() -> None:
    folders = fixture_folders()
    assert len(folders) > 5
    counted = sum(assert_same_as_session_info(folder) for folder in folders)
    assert counted > 20
    again = sum(assert_same_as_session_info(folder) for folder in folders)  # now from the index file
    assert again == counted


# --- generated files -------------------------------------------------------------------------------


def line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def message(entry_id: str, role: str, text: str, ms: int, parent: str | None = None) -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-03-02T09:00:00.000Z",
        "message": {"role": role, "content": content, "timestamp": ms},
    }


HEADER = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-03-01T08:00:00Z", "cwd": "/w"}


def write(path: Path, *chunks: bytes) -> Path:
    path.write_bytes(b"".join(chunks))
    return path


def append(path: Path, *chunks: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(b"".join(chunks))
    bump_mtime(path)


def bump_mtime(path: Path) -> None:
    """A later mtime, as a write a moment later would give (file systems can have coarse clocks)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def one(folder: Path) -> SessionInfo:
    (info,) = list_sessions(folder)
    return info


def test_appends_of_every_kind_agree_with_session_info(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    slot = b'{"type":"title","title":"  Slot title  "}' + b" " * 20 + b"\n"
    path = write(
        folder / "a.jsonl",
        b"\xef\xbb\xbf" + slot,
        line(HEADER),
        line(message("u1", "user", "First   question\nabout the Parser", 1_772_442_000_000)),
        b"not json\n",
        b"\n",
        line({"type": "custom", "id": 7}),  # an id that is not text: called line-N
        line(message("a1", "assistant", "An answer", 1_772_442_001_000, "u1")),
    )
    assert_same_as_session_info(folder)
    steps = [
        [line({"type": "session_info", "id": "n1", "name": "  Named  "})],
        [line(message("a1", "assistant", "duplicate id: must not count", 1))],  # a second a1
        [line(message("u2", "user", "Second", 1_772_442_002_000))],
        [b'{"type":"message","id":"t1","message":{"role":"us'],  # torn: a crash mid-write
        [b'er","content":"x"}}\n', line(message("u3", "user", "after the torn line", 5))],
        [line(message("u4", "user", "no newline yet", 6)).rstrip(b"\n")],
        [b"\n", line({"type": "session_info", "id": "n2", "name": ""})],
        [line(message("line-6", "user", "the stand-in id of line 6 again", 7))],
        [line(message("u5", "user", "done", 1_772_442_009_000))],
    ]
    for chunks in steps:
        append(path, *chunks)
        assert_same_as_session_info(folder)
    assert one(folder).message_count == 7  # the torn line was finished; the second a1 and line-6 skipped


def test_an_unchanged_file_is_not_opened(tmp_path: Path, reads: list[tuple[str, int]]) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    for number in range(3):
        write(folder / f"{number}.jsonl", line(HEADER), line(message(f"u{number}", "user", "hi", 1)))
    assert len(list_sessions(folder)) == 3
    assert sorted(reads) == [("0.jsonl", 0), ("1.jsonl", 0), ("2.jsonl", 0)]
    reads.clear()
    assert len(list_sessions(folder)) == 3
    assert reads == []
    append(folder / "1.jsonl", line(message("u9", "user", "more", 2)))
    assert len(list_sessions(folder)) == 3
    assert reads == [("1.jsonl", (folder / "0.jsonl").stat().st_size)]  # from where it ended


def test_after_an_append_only_the_new_bytes_are_read(tmp_path: Path, reads: list[tuple[str, int]]) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    path = write(
        folder / "a.jsonl",
        line(HEADER),
        line(message("u1", "user", "first", 1)),
        line(message("a1", "assistant", "alpha beta gamma", 2)),
        line(message("u2", "user", "last", 3)),
    )
    assert "alpha" in one(folder).all_messages_text
    old_size = path.stat().st_size
    data = path.read_bytes()
    path.write_bytes(data.replace(b"alpha beta gamma", b"omega omega omeg"))  # same length, same edges
    append(path, line(message("u3", "user", "appended words", 4)))
    reads.clear()
    info = one(folder)
    assert reads == [("a.jsonl", old_size)]
    assert "alpha beta gamma" in info.all_messages_text  # the changed middle was not read again
    assert "appended words" in info.all_messages_text
    assert info.message_count == 4
    assert "omega" in session_info(path).all_messages_text  # what reading it whole would say


def test_shrunk_replaced_or_rewritten_files_are_read_whole(
    tmp_path: Path, reads: list[tuple[str, int]]
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    body = [line(HEADER), line(message("u1", "user", "one", 1)), line(message("u2", "user", "two", 2))]
    path = write(folder / "a.jsonl", *body)
    list_sessions(folder)

    write(path, *body[:2])  # shrank
    bump_mtime(path)
    reads.clear()
    assert one(folder).message_count == 1 and reads == [("a.jsonl", 0)]

    replacement = write(tmp_path / "new.jsonl", *body, line(message("u3", "user", "three", 3)))
    os.replace(replacement, path)  # another inode, larger
    reads.clear()
    assert one(folder).message_count == 3 and reads == [("a.jsonl", 0)]

    write(path, path.read_bytes().replace(b'"one"', b'"uno"'))  # same size, new mtime
    bump_mtime(path)
    reads.clear()
    assert one(folder).first_message == "uno" and reads == [("a.jsonl", 0)]
    assert_same_as_session_info(folder)

    header = path.read_bytes().replace(b"sess-1", b"sess-2")  # another header, grown
    write(path, header, line(message("u4", "user", "four", 4)))
    bump_mtime(path)
    reads.clear()
    assert one(folder).id == "sess-2" and reads == [("a.jsonl", 0)]


def test_deleted_sessions_and_folders_drop_out(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "sessions"
    for name in ("p", "q"):
        (root / name).mkdir(parents=True)
        for number in range(2):
            write(root / name / f"{number}.jsonl", line(HEADER), line(message("u", "user", name, 1)))
    assert len(list_all_sessions(root)) == 4
    (root / "p" / "0.jsonl").unlink()
    assert sorted(str(info.path.relative_to(root)) for info in list_all_sessions(root)) == [
        "p/1.jsonl",
        "q/0.jsonl",
        "q/1.jsonl",
    ]
    (root / "q" / "0.jsonl").unlink()
    (root / "q" / "1.jsonl").unlink()
    (root / "q").rmdir()
    assert len(list_all_sessions(root)) == 1
    with sqlite3.connect(cache / index.INDEX_NAME) as db:
        assert [Path(row[0]).name for row in db.execute("SELECT path FROM sessions")] == ["1.jsonl"]


def test_a_non_session_file_is_remembered_as_such(tmp_path: Path, reads: list[tuple[str, int]]) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "broken.jsonl", b'{"type":"message"}\n')
    write(folder / "empty.jsonl")
    assert list_sessions(folder) == []
    reads.clear()
    assert list_sessions(folder) == [] and reads == []


@pytest.mark.parametrize(
    "damage",
    [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000, b""],
    ids=["garbage", "torn-database", "empty"],
)
def test_a_corrupt_index_is_rebuilt(tmp_path: Path, cache: Path, damage: bytes) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "a.jsonl", line(HEADER), line(message("u1", "user", "hello", 1)))
    cache.mkdir()
    index_file().write_bytes(damage)
    assert one(folder).first_message == "hello"
    with sqlite3.connect(index_file()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (1,)


def test_an_index_of_another_version_is_rebuilt(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "a.jsonl", line(HEADER), line(message("u1", "user", "hello", 1)))
    cache.mkdir()
    with sqlite3.connect(index_file()) as db:
        db.execute("CREATE TABLE sessions (path TEXT, stuff TEXT)")
        db.execute("PRAGMA user_version = 999")
    assert one(folder).first_message == "hello"
    with sqlite3.connect(index_file()) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (index.INDEX_VERSION,)


def test_without_a_usable_cache_folder_the_listing_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "a.jsonl", line(HEADER), line(message("u1", "user", "hello", 1)))
    assert one(folder).first_message == "hello"


def test_two_updaters_at_once_leave_a_whole_index(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    for name in ("p", "q"):
        (root / name).mkdir(parents=True)
        for number in range(40):
            entries = [line(message(f"u{n}", "user", f"{name} {number} {n}", n)) for n in range(30)]
            write(root / name / f"{number}.jsonl", line(HEADER), *entries)
    results: list[int] = []
    errors: list[BaseException] = []

    def update() -> None:
        try:
            results.append(len(list_all_sessions(root)))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=update) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == [80, 80, 80]
    with sqlite3.connect(index_file()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len(indexed_sessions([root / "p", root / "q"])) == 80


# --- search text ---------------------------------------------------------------------------------


def test_search_text_keeps_the_start_and_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "HEAD_CHARS", 40)
    monkeypatch.setattr(index, "TAIL_CHARS", 40)
    monkeypatch.setattr(index, "MESSAGE_CHARS", 30)
    folder = tmp_path / "s"
    folder.mkdir()
    words = [f"word{n:03d}" for n in range(60)]
    entries = [line(message(f"u{n}", "user", word, n)) for n, word in enumerate(words)]
    path = write(folder / "a.jsonl", line(HEADER), *entries[:30])
    append(path, *entries[30:])
    text = one(folder).all_messages_text
    assert text.startswith("word000 word001 word002 word003 word004")
    assert text.endswith("word055 word056 word057 word058 word059")
    assert "word030" not in text and len(text) <= 81
    long = "Long " + "x" * 100
    append(path, line(message("u99", "user", long, 99)))
    assert one(folder).all_messages_text.endswith("long " + "x" * 25)


def test_text_search_narrows_and_remembers() -> None:
    items = [("deploy", "fix the greeting"), ("", "why does the parser crash"), ("", "cherry pick the fix")]
    search = TextSearch(items)
    assert search.find("") == [0, 1, 2]
    assert search.find("fix") == [0, 2]
    assert search.find("fix che") == [2]
    assert search.find("fix cherry") == [2]
    assert search.find("fix") == [0, 2]  # backspace: remembered
    assert search.find("DEPLOY greeting") == [0]  # any case, words from either part
    assert search.find("parser crash") == [1]
    assert search.find("parser crash zebra") == []
    assert search.find("crash") == [1]  # a wider query is not narrowed from the last one


def test_a_long_build_reports_the_newest_sessions_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "FIRST_REPORT_SECONDS", 0.0)
    monkeypatch.setattr(index, "REPORT_EVERY_SECONDS", 0.0)
    folder = tmp_path / "s"
    folder.mkdir()
    for number in range(4):
        path = write(folder / f"{number}.jsonl", line(HEADER), line(message("u", "user", "hi", 1)))
        os.utime(path, (1_000_000 + number, 1_000_000 + number))
    calls: list[tuple[list[str], int, int]] = []

    def progress(infos: list[SessionInfo], done: int, total: int) -> None:
        calls.append(([info.path.name for info in infos], done, total))

    assert len(list_sessions(folder, progress)) == 4
    assert calls == [
        (["3.jsonl"], 1, 4),
        (["3.jsonl", "2.jsonl"], 2, 4),
        (["3.jsonl", "2.jsonl", "1.jsonl"], 3, 4),
    ]
    calls.clear()
    assert len(list_sessions(folder, progress)) == 4 and calls == []  # nothing to read: no reports


async def test_the_picker_shows_the_newest_sessions_while_a_first_build_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.config.paths import session_dir_for_cwd
    from pi_tui.startup import StartOptions, start
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.screens.resume import ResumePicker

    monkeypatch.setattr(PiApp, "CURSOR_BLINK", False)
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)  # the offline model: no network
    monkeypatch.setattr(index, "FIRST_REPORT_SECONDS", 0.0)
    monkeypatch.setattr(index, "REPORT_EVERY_SECONDS", 0.0)
    project = tmp_path / "project"
    project.mkdir()
    folder = session_dir_for_cwd(str(project))
    folder.mkdir(parents=True)
    for number in range(4):
        path = write(
            folder / f"{number}.jsonl", line(HEADER), line(message("u", "user", f"topic {number}", 1))
        )
        os.utime(path, (1_000_000 + number, 1_000_000 + number))
    gate = threading.Event()

    def hold_before_the_oldest(path: Path, offset: int) -> None:
        if path.name == "0.jsonl":
            gate.wait(10)

    monkeypatch.setattr(index, "on_read", hold_before_the_oldest)
    app = PiApp(start(StartOptions(cwd=str(project))), cwd=str(project), open_resume=True)

    def picker() -> ResumePicker:
        screen = app.screen
        assert isinstance(screen, ResumePicker)
        return screen

    def titles() -> list[str]:
        return [row.title for row in picker()._shown]

    def note() -> str:
        widget = picker().query_one("#resume-message")
        return str(widget.render()) if widget.display else ""

    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResumePicker) and len(titles()) == 3,
            "three sessions listed",
        )
        assert titles() == ["topic 3", "topic 2", "topic 1"] and not picker().loaded
        assert note() == "Indexing the sessions folder… 3 of 4 files read"
        await pilot.press(*"topic 2")  # search works on what is known so far
        assert titles() == ["topic 2"]
        gate.set()
        await wait_until(pilot, lambda: picker().loaded, "the picker to finish indexing")
        await pilot.pause()
        await pilot.press("ctrl+u")
        assert titles() == ["topic 3", "topic 2", "topic 1", "topic 0"] and note() == ""
