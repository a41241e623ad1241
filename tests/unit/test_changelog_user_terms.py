"""What /changelog shows is written for users: what they can now do, in pi's shape (version
headings, ``###`` groups, bullets), without the project's internal references (issue numbers,
commit hashes, module and class names, tests) that the first changelog was full of."""

from __future__ import annotations

import re

from pi_tui.tui.slash_more import changelog_entries, changelog_text

INTERNAL = {
    "an issue number": re.compile(r"\bissues? \d+|#\d+", re.I),
    "a commit hash": re.compile(r"\b[0-9a-f]{7,40}\b"),
    "a module": re.compile(r"\b\w+\.py\b|pi_tui[./]"),
    "a class name": re.compile(r"\b(CommandHost|ChatView|PiApp|AgentSession|SessionManager)\b"),
    "tests": re.compile(r"\b(tests?|pytest|interop)\b", re.I),
}


def test_every_entry_is_free_of_internal_references() -> None:
    entries = changelog_entries(changelog_text() or "")
    assert entries
    for entry in entries:
        for what, pattern in INTERNAL.items():
            found = pattern.search(entry)
            assert found is None, f"{what} in the changelog: {found.group(0) if found else ''!r}"


def test_entries_have_pi_s_shape() -> None:
    for entry in changelog_entries(changelog_text() or ""):
        lines = entry.splitlines()
        assert re.fullmatch(r"## \[\d+\.\d+\.\d+\].*", lines[0])
        groups = [line for line in lines if line.startswith("### ")]
        assert groups and "### New Features" in groups
        bullets = [line for line in lines if line.startswith("- ")]
        assert bullets and all(len(line) <= 100 for line in lines)
        features = entry.split("### New Features", 1)[1].split("\n### ", 1)[0]
        # each new feature leads with what it gives the user, in bold, as pi's do
        assert all(re.match(r"- \*\*[^*]+\*\*: ", b) for b in features.splitlines() if b.startswith("- "))
