"""Files follow the tree through the installed ``pi-tui --mode rpc`` against the loopback model
server (issue 34's "Done when", over rpc).

Two turns write, edit, delete and rename files (``write``, ``edit`` and ``bash``); then
``navigate_tree`` with ``restoreFiles`` brings back exactly the first turn's files (the whole
folder is compared), a jump forward the second's, and a jump to another branch's leaf that
branch's; a file edited by hand stops the restore with its name, ``force`` overrides and
``undo_file_restore`` brings the hand edit back byte for byte; a plain move changes no file
(contents and mtimes); ``filesOnly`` restores files without moving the leaf, and with
``keepEdited`` restores the rest and leaves the hand edit as it is (``kept``). Also:
``get_file_changes``, the one-line mistakes (``force`` or ``keepEdited`` without a file restore,
both at once, ids and flags of the wrong type), a session without checkpoints, ``files_notice``
events, an extension's ``ctx.navigate_tree(files="restore")`` (``force``, ``keep_edited``) /
``ctx.undo_file_restore()``, and ``pi-tui serve``, which inherits the commands (a conflict is
its 409).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import configure
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.rpc_client import RpcClient
from tests.support.serve import ServeProcess, configure_agent, wait_idle

pytestmark = requires("pi-tui")

START = {"a.txt": b"alpha\n", "x.txt": b"x marks\n", "keep.md": b"# kept\n", "sub/deep.txt": b"deep\n"}


class PiTuiRpc(RpcClient):
    """:class:`RpcClient` on the installed ``pi-tui`` script."""

    LAUNCHER = ("pi-tui",)

    def ok(self, command: dict[str, Any]) -> Any:
        """The data of a command that must succeed."""
        response = self.request(command)
        assert response["success"], response
        return response.get("data")

    def turn(self, text: str) -> None:
        response = self.request({"type": "prompt", "message": text})
        assert response["success"] and response["data"] == {"disposition": "started"}, response
        self.wait_event("agent_settled")

    def entries(self) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = self.ok({"type": "get_entries"})["entries"]
        return data

    def leaf(self) -> str:
        leaf: str = self.ok({"type": "get_tree"})["leafId"]
        return leaf

    def reply(self, text: str) -> str:
        """The id of the assistant message that says ``text``."""
        for entry in self.entries():
            message = entry.get("message") or {}
            if message.get("role") == "assistant" and any(
                block.get("text") == text for block in message.get("content", [])
            ):
                entry_id: str = entry["id"]
                return entry_id
        raise AssertionError(f"no reply says {text!r}")

    def goto(self, target: str, **fields: Any) -> dict[str, Any]:
        return self.request({"type": "navigate_tree", "targetId": target, **fields})


def folder(root: Path, *, mtimes: bool = False) -> dict[str, Any]:
    """Every file under ``root`` (relative path -> bytes, or (bytes, mtime_ns))."""
    found: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found[path.relative_to(root).as_posix()] = (data, path.stat().st_mtime_ns) if mtimes else data
    return found


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for name, data in START.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)
    return project


def two_turns() -> list[Scripted]:
    """Turn one writes and edits; turn two edits, deletes, renames and creates through bash."""
    return [
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "new.py", "content": "print('v1')\n"}),
                ToolCallSpec("edit", {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "ALPHA"}]}),
            ]
        ),
        Scripted(text="one done"),
        Scripted(
            tool_calls=[
                ToolCallSpec("edit", {"path": "new.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ToolCallSpec("bash", {"command": "rm x.txt; mv a.txt b.txt; echo c > c.txt; rm -r sub"}),
            ]
        ),
        Scripted(text="two done"),
    ]


FIRST = {"a.txt": b"ALPHA\n", "x.txt": b"x marks\n", "keep.md": b"# kept\n", "sub/deep.txt": b"deep\n"}
FIRST["new.py"] = b"print('v1')\n"
SECOND = {"b.txt": b"ALPHA\n", "keep.md": b"# kept\n", "new.py": b"print('v2')\n", "c.txt": b"c\n"}
BRANCH = {**FIRST, "other.txt": b"on the branch\n"}
del BRANCH["keep.md"]


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        configure(agent_dir, model_server)
        yield model_server


def start(project: Path, *args: str) -> PiTuiRpc:
    return PiTuiRpc(project, *args)


def test_files_follow_the_tree_over_rpc(server: ModelServer, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    server.queue(*two_turns())
    rpc = start(project)
    try:
        rpc.turn("one")
        rpc.turn("two")
        assert folder(project) == SECOND
        one, two = rpc.reply("one done"), rpc.reply("two done")
        assert rpc.leaf() == two

        # back to the first turn's point: exactly its files, the conversation there too
        back = rpc.ok({"type": "navigate_tree", "targetId": one, "restoreFiles": True})
        assert folder(project) == FIRST
        assert back["leafId"] == one and back["cancelled"] is False
        files = back["files"]
        assert sorted(files["written"]) == ["a.txt", "new.py", "sub/deep.txt", "x.txt"]
        assert sorted(files["deleted"]) == ["b.txt", "c.txt"]
        assert files["kept"] == [] and files["undoAvailable"] is True and files["checkpoint"]

        # forward to the leaf: the second turn's files
        forward = rpc.ok({"type": "navigate_tree", "targetId": two, "restoreFiles": True})
        assert folder(project) == SECOND and forward["leafId"] == two

        # a branch from the first turn's point, whose turn writes other files
        rpc.ok({"type": "navigate_tree", "targetId": one, "restoreFiles": True})
        server.queue(
            Scripted(
                tool_calls=[
                    ToolCallSpec("write", {"path": "other.txt", "content": "on the branch\n"}),
                    ToolCallSpec("bash", {"command": "rm keep.md"}),
                ]
            ),
            Scripted(text="branch done"),
        )
        rpc.turn("three")
        assert folder(project) == BRANCH
        branch = rpc.reply("branch done")
        assert rpc.ok({"type": "navigate_tree", "targetId": two, "restoreFiles": True})["leafId"] == two
        assert folder(project) == SECOND
        rpc.ok({"type": "navigate_tree", "targetId": branch, "restoreFiles": True})
        assert folder(project) == BRANCH

        # a hand edit the restore would overwrite: refused, naming the file, nothing moved
        (project / "other.txt").write_bytes(b"edited by hand \xe2\x9c\x8d\r\n")
        edited = folder(project, mtimes=True)
        refused = rpc.goto(two, restoreFiles=True)
        assert refused["success"] is False
        error = refused["error"]
        assert "other.txt" in error and '"force": true' in error and "\n" not in error
        assert '"keepEdited": true' in error
        assert folder(project, mtimes=True) == edited and rpc.leaf() == branch
        # forced: the second turn's files; undo brings the hand edit back byte for byte
        forced = rpc.ok({"type": "navigate_tree", "targetId": two, "restoreFiles": True, "force": True})
        assert folder(project) == SECOND and forced["leafId"] == two and forced["files"]["undoAvailable"]
        undone = rpc.ok({"type": "undo_file_restore"})
        assert folder(project) == {name: data for name, (data, _mtime) in edited.items()}
        assert "other.txt" in undone["written"] and undone["undoAvailable"] is True
        assert rpc.leaf() == two  # undo brings files back, the conversation stays
        redone = rpc.ok({"type": "undo_file_restore"})  # again: redo
        assert folder(project) == SECOND and "other.txt" in redone["deleted"]

        # a plain move changes no file, not even an mtime
        before = folder(project, mtimes=True)
        plain = rpc.ok({"type": "navigate_tree", "targetId": one})
        assert plain["leafId"] == one and "files" not in plain
        assert folder(project, mtimes=True) == before

        # files only: the files of the branch's leaf, the leaf stays where it is
        only = rpc.ok({"type": "navigate_tree", "targetId": branch, "filesOnly": True})
        assert folder(project) == BRANCH
        assert only["leafId"] == one and rpc.leaf() == one and only["files"]["written"]

        # keepEdited: the second turn's files, except the one edited by hand, which stays
        (project / "new.py").write_bytes(b"mine\n")
        assert '"keepEdited": true' in rpc.goto(two, filesOnly=True)["error"]
        kept = rpc.ok({"type": "navigate_tree", "targetId": two, "filesOnly": True, "keepEdited": True})
        assert folder(project) == {**SECOND, "new.py": b"mine\n"} and rpc.leaf() == one
        assert kept["files"]["kept"] == ["new.py"] and "new.py" not in kept["files"]["written"]
    finally:
        rpc.kill()


def test_get_file_changes_and_errors(server: ModelServer, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    server.queue(*two_turns())
    rpc = start(project)
    try:
        rpc.turn("one")
        rpc.turn("two")
        entries = rpc.entries()
        checkpoints = [e for e in entries if e.get("customType") == "pi-tui.files"]
        assert len(checkpoints) == 2
        turn = checkpoints[1]["data"]["turn"]
        by_turn = rpc.ok({"type": "get_file_changes", "entryId": turn})
        by_entry = rpc.ok({"type": "get_file_changes", "entryId": checkpoints[1]["id"]})
        assert by_turn == by_entry and by_turn["turn"] == turn
        assert sorted((c["status"], c["path"], c.get("from")) for c in by_turn["changes"]) == [
            ("A", "c.txt", None),
            ("D", "sub/deep.txt", None),
            ("D", "x.txt", None),
            ("M", "new.py", None),
            ("R", "b.txt", "a.txt"),
        ]
        diff = by_turn["diff"]
        assert "-print('v1')" in diff and "+print('v2')" in diff and "+c" in diff
        assert "deep" in diff and "x marks" in diff
        # a turn that changed no file: null
        assert rpc.ok({"type": "get_file_changes", "entryId": rpc.reply("two done")}) is None
        missing = rpc.request({"type": "get_file_changes", "entryId": "nope"})
        assert missing["success"] is False and missing["error"] == "Entry nope not found"
        # nothing restored yet: undo says so in one line
        nothing = rpc.request({"type": "undo_file_restore"})
        assert nothing["success"] is False
        assert nothing["error"] == "Nothing undone: no file restore to undo in this session"
        # mistakes: one line naming the field, nothing moved (force alone used to move, ignored)
        leaf = rpc.leaf()
        for command, said in (
            ({"restoreFiles": "yes"}, '"restoreFiles" must be true or false'),
            ({"keepEdited": 1}, '"keepEdited" must be true or false'),
            ({"force": True}, '"force" needs "restoreFiles" or "filesOnly"'),
            ({"keepEdited": True}, '"keepEdited" needs "restoreFiles" or "filesOnly"'),
            ({"restoreFiles": True, "force": True, "keepEdited": True}, '"force" and "keepEdited" cannot'),
            ({"targetId": 5}, '"targetId" must be a string'),
            ({"targetId": None}, 'navigate_tree needs a "targetId"'),
        ):
            wrong = rpc.request({"type": "navigate_tree", "targetId": turn, **command})
            assert wrong["success"] is False and wrong["error"].startswith(said), (command, wrong)
            assert "\n" not in wrong["error"]
        assert rpc.leaf() == leaf and folder(project) == SECOND
        number = rpc.request({"type": "get_file_changes", "entryId": 5})
        assert number["error"] == '"entryId" must be a string'
        assert rpc.request({"type": "get_file_changes"})["error"] == 'get_file_changes needs an "entryId"'
    finally:
        rpc.kill()


def test_without_checkpoints_a_restore_fails_in_one_line(server: ModelServer, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    server.queue(*two_turns())
    rpc = start(project, "--no-checkpoints")
    try:
        rpc.turn("one")
        rpc.turn("two")
        one = rpc.reply("one done")
        before = folder(project, mtimes=True)
        for command in (
            {"type": "navigate_tree", "targetId": one, "restoreFiles": True},
            {"type": "navigate_tree", "targetId": one, "filesOnly": True},
            {"type": "undo_file_restore"},
            {"type": "get_file_changes", "entryId": one},
        ):
            failed = rpc.request(command)
            assert failed["success"] is False and "file checkpoints are off" in failed["error"], failed
            assert "\n" not in failed["error"] and "Traceback" not in failed["error"]
        assert folder(project, mtimes=True) == before
        assert rpc.leaf() == rpc.reply("two done")  # the refused move did not move
        assert rpc.ok({"type": "navigate_tree", "targetId": one})["leafId"] == one  # a plain move still works
    finally:
        rpc.kill()


def test_files_notice_reaches_the_client(server: ModelServer, tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"checkpoints": {"maxFiles": 2}}))
    project = make_project(tmp_path)
    server.queue(*two_turns()[:2])
    rpc = start(project)
    try:
        rpc.request({"type": "prompt", "message": "one"})
        notice = rpc.wait_event("files_notice")
        assert "checkpoints.maxFiles" in notice["message"]
        rpc.wait_event("agent_settled")
        assert not [e for e in rpc.entries() if e.get("customType") == "pi-tui.files"]
    finally:
        rpc.kill()


EXTENSION = """
import json

from pi_tui.checkpoints.history import FileRestoreConflict
from pi_tui.extensions import ExtensionError


def activate(pi):
    async def goto(args, ctx):
        target, files, *rest = args.split()
        try:
            result = await ctx.navigate_tree(
                target, files=files, force="force" in rest, keep_edited="keep" in rest
            )
        except FileRestoreConflict as error:
            ctx.ui.notify("conflict " + json.dumps(error.paths), "warning")
            return
        except ExtensionError as error:
            ctx.ui.notify("refused: " + str(error), "warning")
            return
        leaf = ctx.session_manager.get_leaf_id()
        ctx.ui.notify(json.dumps({"leaf": leaf, "files": result.files.to_json()}))

    async def undo(args, ctx):
        ctx.ui.notify(json.dumps((await ctx.undo_file_restore()).to_json()))

    pi.register_command("goto", handler=goto, description="Move with the files")
    pi.register_command("undo-files", handler=undo, description="Undo the last file restore")
"""


def test_an_extension_moves_with_the_files(server: ModelServer, tmp_path: Path) -> None:
    extension = tmp_path / "goto.py"
    extension.write_text(textwrap.dedent(EXTENSION))
    project = make_project(tmp_path)
    server.queue(*two_turns())
    rpc = start(project, "-e", str(extension))
    try:
        rpc.turn("one")
        rpc.turn("two")
        one, two = rpc.reply("one done"), rpc.reply("two done")

        def command(text: str) -> str:
            response = rpc.request({"type": "prompt", "message": text})
            assert response["success"] and response["data"] == {"disposition": "handled"}, response
            notify = next(r for r in reversed(rpc.seen) if r.get("method") == "notify")
            message: str = notify["message"]
            assert message.startswith("goto: ")  # the extension's name first
            return message.removeprefix("goto: ")

        moved = json.loads(command(f"/goto {one} restore"))
        assert folder(project) == FIRST and moved["leaf"] == one
        assert sorted(moved["files"]["deleted"]) == ["b.txt", "c.txt"]
        undone = json.loads(command("/undo-files"))
        assert folder(project) == SECOND and undone["undoAvailable"] is True
        assert rpc.leaf() == one
        (project / "c.txt").write_text("by hand\n")
        assert command(f"/goto {two} only") == 'conflict ["c.txt"]'
        assert (project / "c.txt").read_text() == "by hand\n"
        assert command(f"/goto {two} keep force") == 'refused: force needs files="restore" or files="only"'
        assert command(f"/goto {two} only force keep").startswith("refused: force and keep_edited")
        kept = json.loads(command(f"/goto {one} only keep"))  # the rest restored, c.txt left
        assert folder(project) == {**FIRST, "c.txt": b"by hand\n"} and kept["files"]["kept"] == ["c.txt"]
        only = json.loads(command(f"/goto {one} only force"))
        assert folder(project) == FIRST and only["leaf"] == one
        assert (
            json.loads(command("/undo-files"))["written"] and (project / "c.txt").read_text() == "by hand\n"
        )
    finally:
        rpc.kill()


def test_the_server_inherits_the_file_moves(tmp_path: Path, agent_dir: Path) -> None:
    project = make_project(tmp_path)
    with ModelServer() as model_server:
        configure_agent(agent_dir, model_server)
        model_server.queue(*two_turns())
        with ServeProcess(project) as serve, serve.client() as client:
            sid = client.post("/sessions", json={}).json()["id"]
            url = f"/sessions/{sid}/commands"
            for text in ("one", "two"):
                assert client.post(url, json={"type": "prompt", "message": text}).status_code == 200
                wait_idle(client, sid)
            assert folder(project) == SECOND
            listed = client.post(url, json={"type": "get_entries"}).json()["data"]["entries"]
            replies = {
                block.get("text"): entry["id"]
                for entry in listed
                if entry.get("message", {}).get("role") == "assistant"
                for block in entry["message"]["content"]
            }
            one, two = replies["one done"], replies["two done"]
            back = client.post(url, json={"type": "navigate_tree", "targetId": one, "restoreFiles": True})
            assert back.status_code == 200, back.text
            assert folder(project) == FIRST and back.json()["data"]["files"]["undoAvailable"]
            (project / "x.txt").write_bytes(b"by hand\n")
            refused = client.post(url, json={"type": "navigate_tree", "targetId": two, "restoreFiles": True})
            assert refused.status_code == 409 and "x.txt" in refused.json()["error"]
            assert (project / "x.txt").read_bytes() == b"by hand\n"
            forced = {"type": "navigate_tree", "targetId": two, "restoreFiles": True, "force": True}
            assert client.post(url, json=forced).status_code == 200
            assert folder(project) == SECOND
            undone = client.post(url, json={"type": "undo_file_restore"})
            assert undone.status_code == 200 and "x.txt" in undone.json()["data"]["written"]
            assert folder(project) == {**FIRST, "x.txt": b"by hand\n"}
            changes = client.post(url, json={"type": "get_file_changes", "entryId": one})
            assert changes.status_code == 200 and changes.json()["data"] is None  # "one done" ran no tool
