"""The shadow store (pi_tui.checkpoints.store) on real files and real git: a snapshot and a
restore give back every file byte for byte (binary, CRLF, no trailing newline, odd names, the
executable bit, symbolic links, empty files) whatever the user's git configuration and the
project's attributes say; ignored, too large and nested-repository files are never stored nor
touched; the user's ``.git`` is never written; two processes share one store safely.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.checkpoints.store import BULK_PATHS, CheckpointError, ShadowStore, StoreLimits

SESSION = "s1"
Tree = dict[str, tuple[str, bytes, bool]]
"""path -> (kind "file" | "link", content or link target, executable)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "agent" / "checkpoints" / "store"


@pytest.fixture
def store(project: Path, store_dir: Path) -> Iterator[ShadowStore]:
    opened = ShadowStore(project, store_dir)
    yield opened
    opened.close()


def read_tree(root: Path) -> Tree:
    """Every file and link under ``root`` (``.git`` left out) with its bytes and mode."""
    found: Tree = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d))]
        names = files + [d for d in os.listdir(folder) if os.path.islink(os.path.join(folder, d))]
        for name in set(names):
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.fsencode(os.readlink(full)), False)
            else:
                found[rel] = ("file", Path(full).read_bytes(), bool(info.st_mode & stat.S_IXUSR))
    return found


def folders(root: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(folder, d), root)
        for folder, dirs, _ in os.walk(root)
        for d in dirs
        if ".git" not in os.path.relpath(os.path.join(folder, d), root).split(os.sep)
    }


def write(root: Path, rel: str, data: bytes, executable: bool = False) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if executable:
        path.chmod(0o755)


def tree_hash(folder: Path) -> dict[str, str]:
    """Content and mode of everything under ``folder`` (to show it was left alone)."""
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        body = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path.relative_to(folder))] = f"{info.st_mode:o}:{hashlib.sha256(body).hexdigest()}"
    return out


def stored_paths(store_dir: Path, commit: str) -> set[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(store_dir), "ls-tree", "-r", "-z", "--name-only", commit],
        capture_output=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    )
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


ODD_FILES: dict[str, tuple[bytes, bool]] = {
    "bin/blob.dat": (bytes(range(256)) * 3 + b"\0\r\n\x1a", False),
    "crlf.txt": (b"one\r\ntwo\r\nthree\r\n", False),
    "mixed.txt": (b"lf\ncrlf\r\nlone cr\rend", False),
    "no-newline.py": (b"print('x')", False),
    "empty": (b"", False),
    "unicodé ñame/日本語 ファイル.txt": ("héllo wörld\n".encode(), False),
    "with space/a b.txt": (b"spaced\n", False),
    "star*name.txt": (b"a star\n", False),
    "colon:name.txt": (b"a colon\n", False),
    ":(glob)magic": (b"pathspec magic\n", False),
    "[ab].txt": (b"brackets\n", False),
    "run.sh": (b"#!/bin/sh\necho hi\n", True),
    "lfs.bin": (b"version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n", False),
    "$Id$.txt": (b"$Id$\n", False),
}


def make_odd_project(root: Path) -> None:
    for rel, (data, executable) in ODD_FILES.items():
        write(root, rel, data, executable)
    os.symlink("crlf.txt", root / "link-to-file")
    os.symlink("nowhere/at/all", root / "dangling")
    os.symlink("bin", root / "link-to-dir")


def test_round_trip_is_byte_for_byte(project: Path, store: ShadowStore) -> None:
    make_odd_project(project)
    first = read_tree(project)
    before = store.snapshot(SESSION)
    # the turn: change, delete and replace everything, add new files
    for rel in ODD_FILES:
        (project / rel).unlink()
    for link in ("link-to-file", "dangling", "link-to-dir"):
        (project / link).unlink()
    write(project, "crlf.txt", b"now lf\n")
    (project / "run.sh").write_bytes(b"not executable\n")
    write(project, "new/deep/file.txt", b"new\n")
    os.symlink("elsewhere", project / "empty")  # a file became a link
    write(project, "dangling", b"a file where a link was\n")
    after = store.snapshot(SESSION)
    second = read_tree(project)
    assert before.commit != after.commit
    report = store.restore(before.commit, after.commit)
    assert read_tree(project) == first
    assert "new" not in folders(project)  # the folders the new file made are gone
    assert sorted(report.deleted) == ["new/deep/file.txt"]
    assert set(report.written) == set(first) and report.kept == []
    # and forward again
    now = store.snapshot(SESSION)
    store.restore(after.commit, now.commit)
    assert read_tree(project) == second


def test_user_git_config_and_project_attributes_change_nothing(
    project: Path, store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global ``core.autocrlf=true``, a git-lfs filter that would rewrite every file, a global
    attributes file and the project's ``* text eol=crlf``: what comes back is what was there."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    marker = tmp_path / "filter-ran"
    (home / ".gitconfig").write_text(
        "[core]\n\tautocrlf = true\n\teol = crlf\n\tsafecrlf = true\n"
        f"[filter \"lfs\"]\n\tclean = sh -c 'touch {marker}; echo CLEANED'\n"
        f"\tsmudge = sh -c 'touch {marker}; echo SMUDGED'\n\trequired = true\n"
        "[user]\n\tname = someone\n"
    )
    (home / ".config" / "git" / "attributes").write_text("* filter=lfs text eol=crlf\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # a stray variable is ignored
    make_odd_project(project)
    write(project, ".gitattributes", b"* text eol=crlf\n*.bin filter=lfs diff=lfs merge=lfs -text\n")
    write(project, "lf.txt", b"unix\nlines\n")
    expected = read_tree(project)
    store = ShadowStore(project, store_dir)
    try:
        before = store.snapshot(SESSION)
        for rel in [*ODD_FILES, "lf.txt"]:
            write(project, rel, b"changed\n")
        after = store.snapshot(SESSION)
        store.restore(before.commit, after.commit)
    finally:
        store.close()
    assert read_tree(project) == expected
    assert not marker.exists()
    with subprocess.Popen(
        ["git", "--git-dir", str(store_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_DIR": str(store_dir)},
    ) as cat:
        out, _ = cat.communicate(f"{before.commit}:lf.txt\n{before.commit}:crlf.txt\n".encode())
    assert b"unix\nlines\n" in out and b"one\r\ntwo\r\nthree\r\n" in out  # stored as they are


def test_ignored_files_are_never_stored_nor_touched(
    project: Path, store: ShadowStore, store_dir: Path
) -> None:
    write(project, ".gitignore", b"build/\n*.log\n")
    write(project, "src/app.py", b"v1\n")
    write(project, "build/out.o", b"object 1\n")
    write(project, "run.log", b"log 1\n")
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text("secret.env\n")
    write(project, "secret.env", b"KEY=1\n")
    before = store.snapshot(SESSION)
    assert stored_paths(store_dir, before.commit) == {".gitignore", "src/app.py"}
    write(project, "src/app.py", b"v2\n")
    write(project, "build/out.o", b"object 2\n")
    (project / "run.log").unlink()
    write(project, "build/new.o", b"new object\n")
    after = store.snapshot(SESSION)
    assert stored_paths(store_dir, after.commit) == {".gitignore", "src/app.py"}
    report = store.restore(before.commit, after.commit)
    assert report.written == ["src/app.py"] and report.deleted == [] and report.kept == []
    assert (project / "src/app.py").read_bytes() == b"v1\n"
    assert (project / "build/out.o").read_bytes() == b"object 2\n"
    assert (project / "build/new.o").read_bytes() == b"new object\n"
    assert not (project / "run.log").exists()
    assert (project / "secret.env").read_bytes() == b"KEY=1\n"


def test_files_over_the_limit_are_skipped_and_kept(project: Path, store_dir: Path) -> None:
    store = ShadowStore(project, store_dir, StoreLimits(max_file_bytes=100))
    try:
        write(project, "small.txt", b"s" * 100)
        write(project, "big.bin", b"b" * 101)
        write(project, "grows.txt", b"small once\n")
        before = store.snapshot(SESSION)
        assert before.skipped == ("big.bin",)
        assert stored_paths(store_dir, before.commit) == {"small.txt", "grows.txt"}
        write(project, "grows.txt", b"g" * 500)  # recorded small, now too large
        write(project, "big.bin", b"B" * 200)
        write(project, "small.txt", b"changed")
        after = store.snapshot(SESSION)
        assert after.skipped == ("grows.txt",)  # big.bin was named once already
        assert stored_paths(store_dir, after.commit) == {"small.txt"}
        report = store.restore(before.commit, after.commit)
        assert report.kept == ["grows.txt"]
        assert report.written == ["small.txt"]
        assert (project / "grows.txt").read_bytes() == b"g" * 500  # never overwritten
        assert (project / "big.bin").read_bytes() == b"B" * 200
        assert (project / "small.txt").read_bytes() == b"s" * 100
    finally:
        store.close()


def test_too_many_files_is_refused_in_one_line(project: Path, store_dir: Path) -> None:
    for index in range(12):
        write(project, f"f{index}.txt", b"x")
    store = ShadowStore(project, store_dir, StoreLimits(max_files=10))
    try:
        with pytest.raises(CheckpointError) as caught:
            store.snapshot(SESSION)
    finally:
        store.close()
    message = str(caught.value)
    assert "\n" not in message
    assert "12 files" in message and "10" in message and "checkpoints.maxFiles" in message


def test_nested_repository_and_user_git_are_left_alone(
    project: Path, store: ShadowStore, store_dir: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project, "app.py", b"app\n")
    nested = project / "vendor" / "lib"
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    write(nested, "lib.py", b"lib v1\n")
    user_git = tree_hash(project / ".git")
    nested_git = tree_hash(nested / ".git")
    before = store.snapshot(SESSION)
    assert stored_paths(store_dir, before.commit) == {"app.py"}
    write(project, "app.py", b"app 2\n")
    write(nested, "lib.py", b"lib v2\n")
    after = store.snapshot(SESSION)
    assert stored_paths(store_dir, after.commit) == {"app.py"}
    store.restore(before.commit, after.commit)
    assert (project / "app.py").read_bytes() == b"app\n"
    assert (nested / "lib.py").read_bytes() == b"lib v2\n"
    assert tree_hash(project / ".git") == user_git
    assert tree_hash(nested / ".git") == nested_git


def test_deleted_come_back_new_go_and_empty_folders_are_pruned(project: Path, store: ShadowStore) -> None:
    write(project, ".gitignore", b"*.cache\n")
    write(project, "keep/a.txt", b"a\n")
    write(project, "gone/deep/b.txt", b"b\n")
    before = store.snapshot(SESSION)
    (project / "gone" / "deep" / "b.txt").unlink()
    (project / "gone" / "deep").rmdir()
    (project / "gone").rmdir()
    write(project, "fresh/one/two/new.txt", b"new\n")
    write(project, "mixed/new.txt", b"new\n")
    write(project, "mixed/x.cache", b"ignored\n")  # an ignored file keeps its folder
    after = store.snapshot(SESSION)
    report = store.restore(before.commit, after.commit)
    assert report.written == ["gone/deep/b.txt"]
    assert sorted(report.deleted) == ["fresh/one/two/new.txt", "mixed/new.txt"]
    assert (project / "gone/deep/b.txt").read_bytes() == b"b\n"
    assert folders(project) == {"keep", "gone", "gone/deep", "mixed"}
    assert (project / "mixed/x.cache").read_bytes() == b"ignored\n"


def test_a_folder_where_the_target_has_a_file_and_back(project: Path, store: ShadowStore) -> None:
    write(project, "thing", b"a file\n")
    write(project, "other/inner.txt", b"inner\n")
    as_file = store.snapshot(SESSION)
    (project / "thing").unlink()
    write(project, "thing/child.txt", b"a child\n")
    (project / "other/inner.txt").unlink()
    (project / "other").rmdir()
    write(project, "other", b"now a file\n")
    as_folder = store.snapshot(SESSION)
    assert as_folder.commit != as_file.commit
    report = store.restore(as_file.commit, as_folder.commit)
    assert (project / "thing").read_bytes() == b"a file\n"
    assert (project / "other/inner.txt").read_bytes() == b"inner\n"
    assert report.kept == []
    now = store.snapshot(SESSION)
    assert now.commit == as_file.commit or stored_paths(store.path, now.commit) == {
        "thing",
        "other/inner.txt",
    }
    store.restore(as_folder.commit, now.commit)
    assert (project / "thing/child.txt").read_bytes() == b"a child\n"
    assert (project / "other").read_bytes() == b"now a file\n"


def test_a_folder_that_becomes_a_link_and_back(project: Path, store: ShadowStore, tmp_path: Path) -> None:
    """git refuses to remove index entries behind a link with --remove: a folder replaced by a
    link (and back) must not break the store, and a restore never writes through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"outside\n")
    write(project, "sub/f.txt", b"inside\n")
    as_folder = store.snapshot(SESSION)
    shutil.rmtree(project / "sub")
    os.symlink(outside, project / "sub")
    as_link = store.snapshot(SESSION)
    assert stored_paths(store.path, as_link.commit) == {"sub"}
    (project / "sub").unlink()
    write(project, "sub/g.txt", b"g\n")
    as_folder_again = store.snapshot(SESSION)
    store.restore(as_link.commit, as_folder_again.commit)
    assert os.readlink(project / "sub") == str(outside)
    now = store.snapshot(SESSION)
    store.restore(as_folder.commit, now.commit)
    assert not (project / "sub").is_symlink() and (project / "sub/f.txt").read_bytes() == b"inside\n"
    assert not (project / "sub/g.txt").exists()
    assert (outside / "f.txt").read_bytes() == b"outside\n" and sorted(outside.iterdir()) == [
        outside / "f.txt"
    ]


def test_private_files_stay_private(project: Path, store: ShadowStore, store_dir: Path) -> None:
    """The store is its owner's alone (it holds copies of files such as .env), and a restored
    file keeps its own read/write bits (git records only 644 and 755)."""
    write(project, "creds", b"first\n")
    os.chmod(project / "creds", 0o600)
    write(project, "run.sh", b"echo one\n")
    os.chmod(project / "run.sh", 0o750)
    first = store.snapshot(SESSION)
    write(project, "creds", b"second\n")
    write(project, "run.sh", b"echo two\n")
    second = store.snapshot(SESSION)
    store.restore(first.commit, second.commit)
    assert (project / "creds").read_bytes() == b"first\n"
    assert stat.S_IMODE((project / "creds").stat().st_mode) == 0o600
    assert stat.S_IMODE((project / "run.sh").stat().st_mode) == 0o750
    for folder in (store_dir, store_dir.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_non_empty_unrecorded_folder_is_kept(project: Path, store: ShadowStore) -> None:
    write(project, ".gitignore", b"*.tmp\n")
    write(project, "thing", b"a file\n")
    as_file = store.snapshot(SESSION)
    (project / "thing").unlink()
    write(project, "thing/ignored.tmp", b"the user's\n")
    as_folder = store.snapshot(SESSION)
    report = store.restore(as_file.commit, as_folder.commit)
    assert report.kept == ["thing"] and report.written == []
    assert (project / "thing/ignored.tmp").read_bytes() == b"the user's\n"


def test_two_processes_on_one_store(project: Path, store_dir: Path) -> None:
    """Each instance (as each process) has its own index copy; their snapshots never mix."""
    write(project, "a.txt", b"a1\n")
    one = ShadowStore(project, store_dir)
    two = ShadowStore(project, store_dir)
    try:
        first = one.snapshot("one")
        write(project, "b.txt", b"b\n")
        second = two.snapshot("two")
        assert stored_paths(store_dir, first.commit) == {"a.txt"}
        assert stored_paths(store_dir, second.commit) == {"a.txt", "b.txt"}
        errors: list[BaseException] = []

        def churn(store: ShadowStore, session: str, name: str) -> None:
            try:
                for round_ in range(8):
                    write(project, name, f"{round_}\n".encode())
                    taken = store.snapshot(session)
                    assert name in stored_paths(store_dir, taken.commit)
            except BaseException as error:
                errors.append(error)

        threads = [
            threading.Thread(target=churn, args=(one, "one", "one.txt")),
            threading.Thread(target=churn, args=(two, "two", "two.txt")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        copies = sorted(p.name for p in store_dir.glob("index.*"))
        assert len(copies) == 2 and all(str(os.getpid()) in name for name in copies)
    finally:
        one.close()
        two.close()
    assert (store_dir / "index").is_file() and not list(store_dir.glob("index.*"))


def test_two_stores_created_at_once(project: Path, store_dir: Path) -> None:
    """Two processes starting on a project with no store yet: both get a working store."""
    write(project, "a.txt", b"a\n")
    for attempt in range(3):
        where = store_dir.with_name(f"fresh{attempt}")
        stores = [ShadowStore(project, where) for _ in range(4)]
        errors: list[BaseException] = []
        barrier = threading.Barrier(len(stores))

        def start(store: ShadowStore, barrier: threading.Barrier, errors: list[BaseException]) -> None:
            try:
                barrier.wait()
                store.snapshot("s")
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=start, args=(store, barrier, errors)) for store in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for store in stores:
            store.close()
        assert errors == []


def test_stale_index_copies_of_dead_processes_are_removed(project: Path, store_dir: Path) -> None:
    write(project, "a.txt", b"a\n")
    first = ShadowStore(project, store_dir)
    first.snapshot(SESSION)
    first.close()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = store_dir / f"index.{dead.pid}.deadbeef"
    stale_restore = store_dir / f"index.restore.{dead.pid}.deadbeef"
    live = store_dir / f"index.{os.getppid()}.cafecafe"
    for path in (stale, stale_restore, live):
        path.write_bytes(b"junk")
    second = ShadowStore(project, store_dir)
    try:
        second.open()
        assert not stale.exists() and not stale_restore.exists()
        assert live.exists()  # a running process's copy stays
    finally:
        second.close()
        live.unlink()


def test_a_store_inside_the_project_is_not_snapshotted(project: Path) -> None:
    inside = project / ".agent" / "checkpoints" / "store"
    write(project, "app.py", b"app\n")
    store = ShadowStore(project, inside)
    try:
        first = store.snapshot(SESSION)
        write(project, "app.py", b"app 2\n")
        second = store.snapshot(SESSION)
        assert stored_paths(inside, first.commit) == {"app.py"}
        assert stored_paths(inside, second.commit) == {"app.py"}
        store.restore(first.commit, second.commit)
    finally:
        store.close()
    assert (inside / "HEAD").is_file()
    assert (project / "app.py").read_bytes() == b"app\n"


def test_has_unknown_and_known_commits(project: Path, store: ShadowStore) -> None:
    write(project, "a.txt", b"a\n")
    taken = store.snapshot(SESSION)
    assert store.has(taken.commit)
    assert not store.has("0123456789abcdef0123456789abcdef01234567")
    assert not store.has("--output=/tmp/x")


def test_unchanged_files_give_the_same_commit(project: Path, store_dir: Path) -> None:
    """Nothing changed: the same commit, in this process and in the next one."""
    write(project, "a.txt", b"a\n")
    store = ShadowStore(project, store_dir)
    first = store.snapshot(SESSION)
    assert store.snapshot(SESSION).commit == first.commit
    store.close()
    again = ShadowStore(project, store_dir)
    try:
        assert again.snapshot(SESSION).commit == first.commit
    finally:
        again.close()


def test_changes_lists_adds_edits_deletes_renames_and_type_changes(project: Path, store: ShadowStore) -> None:
    write(project, "edit.txt", b"one\n")
    write(project, "gone.txt", b"gone\n")
    write(project, "old name.txt", b"a file long enough to be found as renamed\n" * 4)
    write(project, "becomes-link", b"x\n")
    before = store.snapshot(SESSION)
    write(project, "edit.txt", b"two\n")
    (project / "gone.txt").unlink()
    (project / "old name.txt").rename(project / "new:name.txt")
    (project / "becomes-link").unlink()
    os.symlink("edit.txt", project / "becomes-link")
    write(project, "added*.txt", b"new\n")
    after = store.snapshot(SESSION)
    found = sorted((c.status, c.path, c.old_path) for c in store.changes(before.commit, after.commit))
    assert found == [
        ("A", "added*.txt", None),
        ("D", "gone.txt", None),
        ("M", "edit.txt", None),
        ("R", "new:name.txt", "old name.txt"),
        ("T", "becomes-link", None),
    ]
    assert "-one\n+two" in store.diff(before.commit, after.commit, ["edit.txt"])


def test_a_recorded_folder_replaced_by_an_ignored_file(
    project: Path, store: ShadowStore, store_dir: Path
) -> None:
    """The folder's files leave the snapshot (their path now runs through a file), and the
    ignored file is never touched by a restore."""
    write(project, "keep.txt", b"k\n")
    write(project, "data/one.txt", b"1\n")
    write(project, "data/two.txt", b"2\n")
    as_folder = store.snapshot(SESSION)
    assert stored_paths(store_dir, as_folder.commit) == {"keep.txt", "data/one.txt", "data/two.txt"}
    write(project, ".gitignore", b"/data\n")
    shutil.rmtree(project / "data")
    write(project, "data", b"an ignored file now\n")
    as_file = store.snapshot(SESSION)
    assert stored_paths(store_dir, as_file.commit) == {"keep.txt", ".gitignore"}
    write(project, "keep.txt", b"k2\n")
    now = store.snapshot(SESSION)
    report = store.restore(as_file.commit, now.commit)
    assert report.written == ["keep.txt"]
    assert (project / "data").read_bytes() == b"an ignored file now\n"
    back = store.snapshot(SESSION)
    report = store.restore(as_folder.commit, back.commit)  # the folder's files: the file is in the way
    assert sorted(report.kept) == ["data/one.txt", "data/two.txt"]
    assert (project / "data").read_bytes() == b"an ignored file now\n"


def test_many_files_at_once_go_into_one_pack(project: Path, store: ShadowStore, store_dir: Path) -> None:
    """A first snapshot of many files writes one pack, not a file per object, and what comes
    back is still byte for byte (odd files included); a turn's few files stay loose."""
    make_odd_project(project)
    for index in range(BULK_PATHS):
        write(project, f"many/{index % 7}/file{index}.txt", f"file {index}\r\n".encode() * (index + 1))
    expected = read_tree(project)
    first = store.snapshot(SESSION)
    packs = list((store_dir / "objects" / "pack").glob("*.pack"))
    loose = [p for p in (store_dir / "objects").glob("[0-9a-f][0-9a-f]/*")]
    assert len(packs) == 1
    assert len(loose) < 40  # the trees and the commit; no blob among them
    write(project, "many/0/file0.txt", b"changed\n")
    (project / "crlf.txt").unlink()
    second = store.snapshot(SESSION)
    assert len(list((store_dir / "objects" / "pack").glob("*.pack"))) == 1
    store.restore(first.commit, second.commit)
    assert read_tree(project) == expected
