"""The shadow store: a git repository of its own per project, holding snapshots of the project's
files, so the session tree can bring back the files of any point of a conversation.

It lives in the agent folder (``<agent dir>/checkpoints/--<cwd>--/``), never in the project:
git runs with ``GIT_DIR`` at the store and the project as the work tree, and with the user's git
configuration switched off (``GIT_CONFIG_GLOBAL=/dev/null``), so no filter, hook, ``autocrlf`` or
attribute of theirs changes what is stored or written back, and their own ``.git`` is never read
for anything but its ignore file, never written. What a snapshot holds follows the project's
``.gitignore`` files (and its ``.git/info/exclude``); files larger than ``max_file_bytes`` and
nested repositories are left out (listed as skipped), and a project with more than ``max_files``
files to take at once is refused (a home folder is not a project).

Each process works on its own copy of the index (the stat cache that makes a snapshot of an
unchanged 10,000-file tree a matter of milliseconds), so two sessions in one project never race
on ``index.lock``. Snapshots are commits chained per session under ``refs/pi-tui/``, so git's
garbage collection (switched off here anyway) would never drop one a session file names.

Every method blocks (git processes); the agent calls them through ``asyncio.to_thread``. One
lock serialises them within a process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_FILES = 50_000
BULK_PATHS = 100
"""From this many files at once (a project's first snapshot, an ``npm install``) the files go
into one pack instead of a file per object: 10,000 files take 4 s instead of 11 s, most of
it the kernel making 10,000 files (benchmarks/checkpoints.py). A turn's few files stay loose
objects (a pack per turn would pile up packs that every lookup walks)."""
ZERO_COMMIT = "0" * 40

# Set on every path, with the highest precedence git has ($GIT_DIR/info/attributes): no
# end-of-line conversion, no clean/smudge filter (git-lfs), no keyword expansion, no re-encoding,
# so a restored file is byte for byte the file that was recorded.
NEUTRAL_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"


class CheckpointError(Exception):
    """The store cannot do what was asked; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path that differs between two snapshots (``status``: A added, M modified, D deleted,
    R renamed (``old_path`` is where it was), T type changed)."""

    status: str
    path: str
    old_path: str | None = None

    def to_json(self) -> dict[str, str]:
        data = {"status": self.status, "path": self.path}
        if self.old_path is not None:
            data["from"] = self.old_path
        return data


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The project's files at one moment: a commit in the store, and what was left out."""

    commit: str
    skipped: tuple[str, ...] = ()
    """Paths not recorded (larger than the limit); each is named once, when first met."""


@dataclass(slots=True)
class RestoreReport:
    """What a restore did to the work tree."""

    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Paths the target has but that are not in the current snapshot (ignored or too large
    now): never overwritten."""

    @property
    def changed(self) -> int:
        return len(self.written) + len(self.deleted)


@dataclass(frozen=True, slots=True)
class StoreLimits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_files: int = DEFAULT_MAX_FILES


def store_dir_for(cwd: str | Path, root: Path | None = None) -> Path:
    """Where the store of ``cwd`` lives: ``<agent dir>/checkpoints/--<cwd>--``."""
    from pi_tui.config.paths import agent_dir, encode_cwd

    base = root if root is not None else agent_dir() / "checkpoints"
    return base / encode_cwd(os.path.abspath(str(cwd)))


def git_available() -> bool:
    return shutil.which("git") is not None


class ShadowStore:
    """Snapshots of one project folder in one store. Thread-safe; every call blocks."""

    def __init__(self, project: str | Path, store: str | Path, limits: StoreLimits | None = None) -> None:
        self.project = Path(project).resolve()
        self.path = Path(store)
        self.limits = limits or StoreLimits()
        self._lock = threading.RLock()
        self._index: Path | None = None
        self._last: tuple[str, str] | None = None  # (tree, commit) of the last snapshot
        self._tips: dict[str, tuple[str, str]] = {}  # session ref -> (commit, tree) set here
        self._skipped_said: set[str] = set()
        self._env: dict[str, str] | None = None

    # --- set-up ------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        if self._env is None:
            env = {
                key: value
                for key, value in os.environ.items()
                if not key.startswith("GIT_") and key not in ("LANG", "LANGUAGE")
            }
            env.update(
                GIT_DIR=str(self.path),
                GIT_WORK_TREE=str(self.project),
                GIT_CONFIG_NOSYSTEM="1",
                GIT_CONFIG_GLOBAL=os.devnull,
                GIT_TERMINAL_PROMPT="0",
                GIT_OPTIONAL_LOCKS="0",
                GIT_LITERAL_PATHSPECS="1",
                GIT_AUTHOR_NAME="pi-tui",
                GIT_AUTHOR_EMAIL="checkpoints@pi-tui.invalid",
                GIT_COMMITTER_NAME="pi-tui",
                GIT_COMMITTER_EMAIL="checkpoints@pi-tui.invalid",
                LC_ALL="C",
            )
            self._env = env
        return self._env

    def open(self) -> None:
        """Create the store when it is missing and take this process's index copy. Raises
        :class:`CheckpointError` when git is missing or the store cannot be made."""
        with self._lock:
            if self._index is not None:
                return
            if not git_available():
                raise CheckpointError("file checkpoints need git on PATH; files will not follow the tree")
            if not self.project.is_dir():
                raise CheckpointError(f"file checkpoints: {self.project} is not a folder")
            if not (self.path / "HEAD").is_file():
                self._create()
            _private(self.path)
            self._write_info()
            _remove_stale_indexes(self.path)
            shared = self.path / "index"
            mine = self.path / f"index.{os.getpid()}.{uuid.uuid4().hex[:8]}"
            if shared.is_file():  # copy2: its mtime is what git's racy-clean check compares with
                shutil.copy2(shared, mine)
            self._index = mine

    def _create(self) -> None:
        """Make the store in a folder of its own beside it and rename that into place, so a
        second process starting at the same moment finds either nothing or a whole store (git
        init and git config in place race on ``config.lock``)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        making = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        env = {k: v for k, v in self._environment().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        try:
            done = subprocess.run(
                ["git", "init", "--quiet", "--bare", str(making)], env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                raise CheckpointError(
                    f"file checkpoints: cannot create {self.path}: {_first_line(done.stderr)}"
                )
            for key, value in (
                ("core.bare", "false"),
                ("core.autocrlf", "false"),
                ("core.quotepath", "false"),
                ("core.untrackedCache", "true"),
                ("core.fsmonitor", "false"),
                ("core.symlinks", "true"),
                ("gc.auto", "0"),
                ("advice.addEmbeddedRepo", "false"),
            ):
                self._git("config", "--file", str(making / "config"), key, value)
            try:
                os.rename(making, self.path)  # onto nothing, or an empty folder
            except OSError:
                if not (self.path / "HEAD").is_file():  # not another process's store: a real failure
                    raise CheckpointError(f"file checkpoints: cannot create {self.path}") from None
        finally:
            shutil.rmtree(making, ignore_errors=True)

    def _write_info(self) -> None:
        """info/attributes (no conversions) and info/exclude: the project's own
        ``.git/info/exclude`` and, when the agent folder sits inside the project, the store."""
        info = self.path / "info"
        info.mkdir(exist_ok=True)
        _write_if_changed(info / "attributes", NEUTRAL_ATTRIBUTES)
        lines = ["# written by pi-tui: what its file checkpoints leave out"]
        user_exclude = self.project / ".git" / "info" / "exclude"
        with contextlib.suppress(OSError, UnicodeDecodeError):
            lines.append(user_exclude.read_text(encoding="utf-8"))
        with contextlib.suppress(ValueError):
            inside = self.path.resolve().relative_to(self.project)
            lines.append("/" + inside.parts[0] + "/")
        _write_if_changed(info / "exclude", "\n".join(lines) + "\n")

    def close(self) -> None:
        """Hand this process's index back as the shared one (the next session starts warm)."""
        with self._lock:
            if self._index is None:
                return
            index, self._index = self._index, None
            with contextlib.suppress(OSError):
                if index.is_file():
                    os.replace(index, self.path / "index")

    # --- git ---------------------------------------------------------------------------------

    def _git(self, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
        env = self._environment()
        chosen = index or self._index
        if chosen is not None:
            env = {**env, "GIT_INDEX_FILE": str(chosen)}
        try:
            done = subprocess.run(
                ["git", *args], cwd=self.project, env=env, input=stdin, capture_output=True, check=False
            )
        except OSError as error:
            raise CheckpointError(f"file checkpoints: cannot run git: {error}") from None
        if done.returncode != 0:
            message = _first_line(done.stderr.decode("utf-8", "replace"))
            command = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "")
            raise CheckpointError(f"file checkpoints: git {command} failed: {message}")
        return done.stdout

    # --- snapshots ---------------------------------------------------------------------------

    def snapshot(self, session: str, extra: Sequence[str] = (), *, rescan: bool = True) -> Snapshot:
        """Record the project's files now; returns the commit (the same one again when nothing
        changed since this process's last snapshot).

        ``extra``: paths (relative to the project) recorded even when ignored: the files the
        agent's ``write`` and ``edit`` name, which a restore must bring back whatever the
        project's ``.gitignore`` says. Once recorded, git follows them like any other. Without
        ``rescan`` only they are looked at (the rest was recorded a moment ago)."""
        with self._lock:
            self.open()
            listed = (
                self._git("ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard")
                if rescan
                else b""
            )
            found = {p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p}
            found.update(path for path in extra if os.path.lexists(self.project / path))
            paths = sorted(found)
            if not paths and self._last is not None:  # the index is as the last snapshot left it
                return Snapshot(self._last[1])
            if len(paths) > self.limits.max_files:
                raise CheckpointError(
                    f"file checkpoints are off here: {len(paths):,} files to record at once (more than "
                    f"{self.limits.max_files:,}); add a .gitignore or raise checkpoints.maxFiles"
                )
            take, skipped = self._choose(paths)
            if take:
                self._record(take)
            tree = self._git("write-tree").decode().strip()
            new_skips = tuple(path for path in skipped if path not in self._skipped_said)
            self._skipped_said.update(new_skips)
            if self._last is not None and self._last[0] == tree:
                return Snapshot(self._last[1], new_skips)
            ref = f"refs/pi-tui/sessions/{safe_name(session)}"
            tip = self._tips.get(ref) or self._tip(ref)
            if tip is not None and tip[1] == tree:  # as the session's last snapshot left them
                self._last = (tree, tip[0])
                return Snapshot(tip[0], new_skips)
            parent = tip[0] if tip is not None else None
            args = ["commit-tree", tree, "-m", "pi-tui checkpoint"]
            if parent is not None:
                args[2:2] = ["-p", parent]
            commit = self._git(*args).decode().strip()
            self._git("update-ref", ref, commit)
            self._tips[ref] = (commit, tree)  # the next commit's parent, without asking git
            self._last = (tree, commit)
            return Snapshot(commit, new_skips)

    def _record(self, paths: Sequence[str]) -> None:
        """Hash ``paths`` into the index (``--replace``: a file that became a folder, or back,
        replaces its old entries)."""
        # core.bigFileThreshold=1: many files stream into the one pack of this update
        bulk = ("-c", "core.bigFileThreshold=1") if len(paths) >= BULK_PATHS else ()
        self._git(
            *bulk, "update-index", "-z", "--add", "--remove", "--replace", "--stdin", stdin=_nul_joined(paths)
        )

    def _choose(self, paths: Sequence[str]) -> tuple[list[str], list[str]]:
        """The paths to record (deleted ones included: update-index removes them) and those
        left out: nested repositories (listed with a trailing ``/``) and files over the limit
        (taken out of the index too, so the snapshot does not keep an old copy of them)."""
        take: list[str] = []
        skipped: list[str] = []
        gone: list[str] = []
        limit = self.limits.max_file_bytes
        linked: dict[str, bool] = {}  # folder -> it (or a folder above it) is a link now
        for path in paths:
            if path.endswith("/"):
                continue
            if _behind_a_link(self.project, path, linked):
                gone.append(path)  # its folder became a link: the file is not ours to read
                continue
            try:
                info = os.lstat(self.project / path)
            except (FileNotFoundError, NotADirectoryError):  # gone, or a file where its folder was
                gone.append(path)
                continue
            except OSError:
                continue
            if limit and info.st_size > limit and not _is_link(info.st_mode):
                skipped.append(path)
                continue
            take.append(path)
        # --force-remove: git refuses --remove for a path behind a link; one git for all of them
        # (a folder of big files is listed every time)
        if gone or skipped:
            self._git("update-index", "-z", "--force-remove", "--stdin", stdin=_nul_joined(gone + skipped))
        return take, skipped

    def _tip(self, ref: str) -> tuple[str, str] | None:
        """The commit ``ref`` names and its tree, or None for a new ref."""
        try:
            out = self._git("rev-parse", "--quiet", ref + "^{commit}", ref + "^{tree}").decode().split()
        except CheckpointError:
            return None
        return (out[0], out[1]) if len(out) == 2 else None

    def _ref(self, ref: str) -> str | None:
        try:
            out = self._git("rev-parse", "--verify", "--quiet", ref + "^{commit}")
        except CheckpointError:
            return None
        return out.decode().strip() or None

    def has(self, commit: str) -> bool:
        """Whether ``commit`` is in this store (a session file from another machine names
        checkpoints this one never saw)."""
        with self._lock:
            self.open()
            try:
                self._git("cat-file", "-e", commit + "^{tree}")
            except CheckpointError:
                return False
            return True

    # --- comparing ---------------------------------------------------------------------------

    def changes(self, old: str, new: str, *, renames: bool = True) -> list[FileChange]:
        """The paths that differ from ``old`` to ``new`` (renames found as git finds them)."""
        if old == new:
            return []
        with self._lock:
            self.open()
            args = ["diff-tree", "-r", "-z", "--no-commit-id", "--name-status"]
            args.append("-M" if renames else "--no-renames")
            out = self._git(*args, old, new).decode("utf-8", "surrogateescape")
        return _parse_name_status(out)

    def diff(self, old: str, new: str, paths: Iterable[str] = ()) -> str:
        """A unified diff from ``old`` to ``new`` (binary files named, not shown)."""
        with self._lock:
            self.open()
            args = ["diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", "--no-commit-id", old, new]
            chosen = list(paths)
            if chosen:
                args += ["--", *chosen]
            return self._git(*args).decode("utf-8", "replace")

    # --- restoring ---------------------------------------------------------------------------

    def restore(self, target: str, current: str, skip: Iterable[str] = ()) -> RestoreReport:
        """Make the work tree hold ``target``'s files where it now holds ``current``'s (the
        snapshot just taken): changed files are written, files ``target`` lacks are deleted.
        Files outside ``current`` (ignored, too large) are never touched."""
        with self._lock:
            self.open()
            report = RestoreReport()
            if target == current:
                return report
            changes = self.changes(current, target, renames=False)
            left = set(skip)  # the caller's: left as they are, listed as kept
            report.kept.extend(sorted(c.path for c in changes if c.path in left))
            changes = [c for c in changes if c.path not in left]
            write = [c.path for c in changes if c.status != "D"]
            delete = [c.path for c in changes if c.status == "D"]
            # Without renames, "A" is a path ``current`` lacks: on disk it is the user's
            # (ignored, too large, a folder of theirs), unless the deletions below clear it.
            absent_now = {c.path for c in changes if c.status == "A"}
            for path in delete:  # first: a folder they empty may be where a file comes back
                target_path = self.project / path
                if target_path.is_dir() and not target_path.is_symlink():
                    report.kept.append(path)  # a folder made since: not ours to remove
                    continue
                try:
                    target_path.unlink()
                except (FileNotFoundError, NotADirectoryError):
                    pass
                except OSError:  # not ours to delete (permissions, a read-only mount): kept
                    report.kept.append(path)
                    continue
                report.deleted.append(path)
                _prune_empty_parents(target_path.parent, self.project)
            for path in write:
                if path not in absent_now:
                    continue
                on_disk = self.project / path
                if on_disk.is_dir() and not on_disk.is_symlink():
                    with contextlib.suppress(OSError):
                        on_disk.rmdir()  # an empty folder where the target has a file
                if os.path.lexists(on_disk) or _file_in_the_way(self.project, path):
                    report.kept.append(path)  # on disk but not recorded: the user's, left alone
            write = [path for path in write if path not in report.kept]
            if write:
                modes = _modes(self.project, write)  # git knows only 644 and 755
                scratch = self.path / f"index.restore.{os.getpid()}.{uuid.uuid4().hex[:8]}"
                try:
                    self._git("read-tree", target, index=scratch)
                    self._git(
                        "checkout-index", "-f", "-z", "--stdin", stdin=_nul_joined(write), index=scratch
                    )
                finally:
                    with contextlib.suppress(OSError):
                        scratch.unlink()
                _keep_modes(self.project, modes)
                report.written.extend(write)
            # Only these are hashed again (the rest keep their cached stat data); the deleted
            # first: one that is a folder now must leave the index before its files come in.
            # (--force-remove: a deleted file's folder may be a link now, which --remove refuses)
            if report.deleted:
                self._git(
                    "update-index", "-z", "--force-remove", "--stdin", stdin=_nul_joined(report.deleted)
                )
            if report.written:
                self._record(report.written)
            self._last = None
            return report

    # --- undo points -------------------------------------------------------------------------

    def set_undo(self, session: str, commit: str | None) -> None:
        """Keep ``commit`` as the state ``undo_file_restore`` brings back (None forgets it)."""
        with self._lock:
            self.open()
            ref = f"refs/pi-tui/undo/{safe_name(session)}"
            if commit is None:
                with contextlib.suppress(CheckpointError):
                    self._git("update-ref", "-d", ref)
            else:
                self._git("update-ref", ref, commit)

    def undo_point(self, session: str) -> str | None:
        with self._lock:
            self.open()
            return self._ref(f"refs/pi-tui/undo/{safe_name(session)}")


def _parse_name_status(out: str) -> list[FileChange]:
    fields = out.split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1]
        if status in ("R", "C"):
            changes.append(FileChange("R" if status == "R" else "A", fields[i + 2], fields[i + 1]))
            i += 3
        else:
            changes.append(FileChange(status, fields[i + 1]))
            i += 2
    return changes


def _file_in_the_way(project: Path, path: str) -> bool:
    """Whether a folder of ``path`` is a file or a link on disk (one not recorded: writing
    ``path`` would replace it)."""
    folder = project
    for part in path.split("/")[:-1]:
        folder = folder / part
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            return True
        if not os.path.lexists(folder):
            return False
    return False


def _prune_empty_parents(folder: Path, project: Path) -> None:
    while folder != project and project in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _private(store: Path) -> None:
    """The store and the checkpoints folder holding it: the owner's alone (0700). They hold
    copies of the project's files, ``.env`` files the agent edited among them, and git writes
    its objects readable by all."""
    for folder in (store.parent, store):
        with contextlib.suppress(OSError):
            if stat.S_IMODE(folder.stat().st_mode) != 0o700:
                folder.chmod(0o700)


def _modes(project: Path, paths: Sequence[str]) -> dict[str, int]:
    """The permission bits of the regular files a restore is about to rewrite."""
    found: dict[str, int] = {}
    for path in paths:
        with contextlib.suppress(OSError):
            info = os.lstat(project / path)
            if stat.S_ISREG(info.st_mode):
                found[path] = stat.S_IMODE(info.st_mode)
    return found


def _keep_modes(project: Path, modes: dict[str, int]) -> None:
    """Give rewritten files their own read/write bits back (a 0600 file stays 0600); the
    executable bits are the recorded ones, as git wrote them."""
    for path, mode in modes.items():
        with contextlib.suppress(OSError):
            info = os.lstat(project / path)
            if stat.S_ISREG(info.st_mode):
                readable = (mode & 0o444) >> 2  # executable only where it may be read
                wanted = (mode & ~0o111) | (stat.S_IMODE(info.st_mode) & 0o111 & readable)
                if wanted != stat.S_IMODE(info.st_mode):
                    os.chmod(project / path, wanted)


def _behind_a_link(project: Path, path: str, linked: dict[str, bool]) -> bool:
    """Whether a folder on the way to ``path`` is a symbolic link (or no folder at all)."""
    parts = path.split("/")[:-1]
    folder = ""
    for part in parts:
        folder = f"{folder}/{part}" if folder else part
        known = linked.get(folder)
        if known is None:
            try:
                known = _is_link(os.lstat(project / folder).st_mode)
            except OSError:
                known = False
            linked[folder] = known
        if known:
            return True
    return False


def _is_link(mode: int) -> bool:
    return stat.S_ISLNK(mode)


def _nul_joined(paths: Iterable[str]) -> bytes:
    return b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in paths)


def safe_name(name: str) -> str:
    """A session id as one ref or file name component (anything but letters, digits, ``-``
    and ``_`` becomes ``_``)."""
    cleaned = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
    return cleaned or "none"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "no reason given"


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (another process's git may be reading it)."""
    with contextlib.suppress(OSError):
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _remove_stale_indexes(store: Path) -> None:
    """Index copies of processes that ended without handing theirs back (killed, crashed)."""
    for copy in store.glob("index.*"):
        parts = copy.name.split(".")
        pid = parts[2] if parts[1] == "restore" and len(parts) > 2 else parts[1]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            copy.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
