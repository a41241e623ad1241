"""``/share``: the exported page as a secret GitHub gist, through the GitHub CLI (``gh``).

pi-tui never holds a GitHub token: ``gh`` does the upload with the user's own login. What can go
wrong is said in one line each: ``gh`` missing, not logged in, the upload refused (with gh's
own words), or an answer without a gist address.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

GH_INSTALL_HINT = "GitHub CLI (gh) is not installed: install it from https://cli.github.com/ to use /share."
_GIST_URL = re.compile(r"https://gist\.github\.com/\S+")
_TIMEOUT = 120.0


class ShareError(Exception):
    """Why the page could not be shared: one line for the user."""


@dataclass(frozen=True, slots=True)
class SharedPage:
    gist_url: str
    gist_id: str
    viewer_url: str | None
    """``$PI_SHARE_VIEWER_URL#<gist id>`` when that variable is set (as pi builds it)."""


def destination_problem(destination: str) -> str | None:
    """Why ``sessionShareDestination`` cannot be honoured, or None. pi 1.x can upload to Radius,
    its makers' hosted service, which pi-tui has no account or client for: ``auto`` (Radius when
    signed in, else a gist) is a gist here, and ``radius`` (never a gist) is refused rather than
    silently published somewhere the user did not choose."""
    if destination == "radius":
        return (
            'sessionShareDestination is "radius": pi-tui shares by GitHub gist only. Set it to '
            '"gist" or "auto" to share with /share, or use /export to keep the page.'
        )
    return None


def gh_path() -> str:
    """The ``gh`` on PATH, or :class:`ShareError` saying how to get it."""
    found = shutil.which("gh")
    if found is None:
        raise ShareError(GH_INSTALL_HINT)
    return found


def check_logged_in(gh: str) -> None:
    """``gh auth status`` must succeed; otherwise say how to log in."""
    try:
        done = subprocess.run([gh, "auth", "status"], capture_output=True, text=True, timeout=_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ShareError(f"Cannot run gh: {error}") from error
    if done.returncode != 0:
        raise ShareError("GitHub CLI is not logged in: run 'gh auth login' first, then /share again.")


def upload(gh: str, page: Path) -> SharedPage:
    """Create a secret gist holding ``page``; its address comes from gh's output."""
    try:
        done = subprocess.run(
            [gh, "gist", "create", "--public=false", str(page)],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ShareError(f"Failed to create the gist: {error}") from error
    if done.returncode != 0:
        reason = (
            " ".join((done.stderr or done.stdout or "").split())[:300] or f"gh exited with {done.returncode}"
        )
        raise ShareError(f"Failed to create the gist: {reason}")
    match = _GIST_URL.search(done.stdout or "")
    if match is None:
        raise ShareError(
            "gh created no gist address that pi-tui could read: " + (done.stdout or "").strip()[:200]
        )
    url = match.group(0).rstrip("/")
    gist_id = url.rsplit("/", 1)[-1]
    base = os.environ.get("PI_SHARE_VIEWER_URL")
    return SharedPage(url, gist_id, f"{base}#{gist_id}" if base else None)
