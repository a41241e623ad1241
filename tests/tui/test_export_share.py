"""/export (the HTML page) and /share (a secret gist through a fake ``gh`` on PATH), in the app."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.integration.test_export_jsonl import branched, said
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app

FAKE_GH = """#!/bin/sh
# A stand-in for the GitHub CLI: records its arguments and the uploaded file, answers like gh.
printf '%s\\n' "$*" >> "$GH_LOG"
case "$1 $2" in
  "auth status")
    [ -n "$GH_LOGGED_IN" ] && exit 0
    echo "You are not logged into any GitHub hosts." >&2; exit 1 ;;
  "gist create")
    for last in "$@"; do :; done
    cp "$last" "$GH_UPLOAD"
    [ -n "$GH_FAIL" ] && { echo "HTTP 422: Validation Failed" >&2; exit 1; }
    echo "- Creating gist session.html" >&2
    echo "https://gist.github.com/someone/0123456789abcdef"
    exit 0 ;;
esac
exit 2
"""


@pytest.fixture
def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_UPLOAD", str(tmp_path / "uploaded.html"))
    return tmp_path


async def run_and_wait(pilot, app, name: str, args: str, marker: str) -> None:
    app.run_slash(name, args)
    await wait_until(
        pilot, lambda: marker in said(app), f"{marker!r} after /{name} {args}", detail=lambda: said(app)
    )


def project_with_session(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder and a branched session of it (two ways, one label)."""
    project = tmp_path / "project"
    project.mkdir()
    source, _ = branched(project, tmp_path / "sessions")
    return project, source


async def test_export_writes_the_page_of_the_whole_tree(tmp_path: Path, agent_dir: Path) -> None:
    project, source = project_with_session(tmp_path)
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await run_and_wait(pilot, app, "export", "", "Session exported to:")
        default = project / f"pi-tui-session-{source.stem}.html"
        assert f"Session exported to: {default}" in said(app)
        await run_and_wait(pilot, app, "export", "out/mine.html", "mine.html")
        everything = {raw["id"] for raw in app.agent.manager.iter_raw_entries()}
    page = (project / "out" / "mine.html").read_text()
    assert page.rstrip().endswith("</html>")  # written whole
    tree = json.loads(page.split('id="pi-tree">', 1)[1].split("</script>", 1)[0])
    # every entry of every branch, the abandoned one included
    assert "abandoned" in page and "second way" in page
    assert set(tree["ids"]) == everything
    assert list(tree["labels"].values()) == ["start"]
    assert default.exists()


async def test_share_uploads_a_secret_gist_and_prints_the_links(
    fake_gh: Path, tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, source = project_with_session(tmp_path)
    monkeypatch.setenv("GH_LOGGED_IN", "1")
    monkeypatch.setenv("PI_SHARE_VIEWER_URL", "https://viewer.example/session/")
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await run_and_wait(pilot, app, "share", "", "Gist:")
        text = said(app)
    assert "Share URL: https://viewer.example/session/#0123456789abcdef" in text
    assert "Gist: https://gist.github.com/someone/0123456789abcdef" in text
    calls = (fake_gh / "gh.log").read_text().splitlines()
    assert calls[0] == "auth status"
    assert calls[1].startswith("gist create --public=false ") and calls[1].endswith("session.html")
    uploaded = (fake_gh / "uploaded.html").read_text()
    assert "second way" in uploaded and uploaded.rstrip().endswith("</html>")
    assert not list(project.glob("*.html"))  # the page went to a temporary folder, now gone


async def test_share_says_what_is_missing(
    fake_gh: Path, tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, source = project_with_session(tmp_path)
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await run_and_wait(pilot, app, "share", "", "not logged in")
        assert "GitHub CLI is not logged in: run 'gh auth login' first" in said(app)
        monkeypatch.setenv("GH_LOGGED_IN", "1")
        monkeypatch.setenv("GH_FAIL", "1")
        await run_and_wait(pilot, app, "share", "", "Failed to create the gist")
        assert "Failed to create the gist: HTTP 422: Validation Failed" in said(app)
        monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
        await run_and_wait(pilot, app, "share", "", "not installed")
        assert "GitHub CLI (gh) is not installed" in said(app)
