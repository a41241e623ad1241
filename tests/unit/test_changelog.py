"""CHANGELOG.md: packaged with pi-tui (a link inside the package) and split into versions as
pi's /changelog does."""

from __future__ import annotations

from pathlib import Path

from pi_tui import __version__
from pi_tui.tui.slash_more import changelog_entries, changelog_text

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_holds_the_repositorys_changelog() -> None:
    inside = ROOT / "pi_tui" / "CHANGELOG.md"
    assert inside.is_symlink() and inside.resolve() == (ROOT / "CHANGELOG.md").resolve()
    assert changelog_text() == (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert '"pi_tui" = ["CHANGELOG.md"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_newest_entry_is_this_version() -> None:
    entries = changelog_entries(changelog_text() or "")
    assert entries and entries[0].startswith(f"## [{__version__}]")


def test_entries_are_version_sections_only() -> None:
    text = "# Changelog\n\nintro\n\n## [1.2.0] - 2026\n\n- new\n\n## Notes\n\nskip me\n\n## 1.1.0\n\n- old\n"
    assert changelog_entries(text) == ["## [1.2.0] - 2026\n\n- new", "## 1.1.0\n\n- old"]
