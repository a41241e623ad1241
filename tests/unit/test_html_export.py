"""The Python half of the HTML export: what goes into the page and how it is embedded."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from pi_tui.html_export import default_html_name, export_html, is_html_name
from pi_tui.html_export.page import SCRIPTS, escape_for_script, json_block, page_chunks, script_source
from pi_tui.html_export.payload import derived_haystack, session_payload
from pi_tui.session import SessionManager
from pi_tui.view.tree_model import TreeModel
from tests.support.sessions import INJECTIONS, branchy_session, hostile_session

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "pi-sessions"


def test_data_can_never_close_its_script_element() -> None:
    value = {"text": "a </script><script>alert(1)</script> <!-- b", "n": [1, 2]}
    block = json_block(value)
    assert b"<" not in block
    assert json.loads(block) == value
    lines = escape_for_script(b'{"a":"</SCRIPT>"}\n{"b":"<!--"}')
    assert b"<" not in lines and [json.loads(line) for line in lines.splitlines()] == [
        {"a": "</SCRIPT>"},
        {"b": "<!--"},
    ]


def test_the_page_code_holds_nothing_that_ends_its_element() -> None:
    folder = resources.files("pi_tui.html_export").joinpath("assets")
    for name in (*SCRIPTS, "page.css"):
        text = folder.joinpath(name).read_text(encoding="utf-8").lower()
        assert "</script" not in text and "<!--" not in text and "</style" not in text, name
    # text goes in as text nodes only: no HTML parsing anywhere in the page's code
    assert not re.search(
        r"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|eval\(", script_source()
    )


def test_every_script_and_style_carries_the_policy_nonce() -> None:
    page = b"".join(page_chunks(title="<b>t</b>", tree={}, entries=b"", summary={}, palettes=[])).decode()
    nonce = re.search(r"'nonce-([^']+)'", page).group(1)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in policy and "img-src data:" in policy and "connect-src" not in policy
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    executable = re.findall(r"<script(?![^>]*(?:application/(?:json|x-ndjson)|text/plain))([^>]*)>", page)
    assert executable and all(f'nonce="{nonce}"' in attributes for attributes in executable)
    assert re.findall(r"<style([^>]*)>", page) == [f' nonce="{nonce}"']


def test_each_export_gets_its_own_nonce() -> None:
    def nonce() -> str:
        page = b"".join(page_chunks(title="t", tree={}, entries=b"", summary={}, palettes=[])).decode()
        return re.search(r"'nonce-([^']+)'", page).group(1)

    assert nonce() != nonce()


@pytest.mark.parametrize("name", ["00-tree-label-summary", "02-tool-calls", "06-tree-branch-summary"])
def test_the_payload_is_the_tree_model_flattened(name: str) -> None:
    manager = SessionManager.open(FIXTURES / name / "session.jsonl", read_only=True)
    payload = session_payload(manager)
    tree = payload.tree
    model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode="all")
    rows = [row.entry_id for row in model.rows]
    assert [entry_id for entry_id in tree["ids"] if entry_id in rows] == rows  # same order
    assert set(tree["ids"]) == {raw["id"] for raw in manager.iter_raw_entries()}
    lines = payload.entries.split(b"\n")
    assert [json.loads(line)["id"] for line in lines] == tree["ids"]
    for index, parent in enumerate(tree["parents"]):
        raw = json.loads(lines[index])
        assert (tree["ids"][parent] if parent >= 0 else None) == raw.get("parentId")
    assert [tree["ids"][i] for i in tree["path"]] == [
        i for i in tree["ids"] if i in set(manager.get_branch_ids())
    ]
    assert tree["leaf"] == manager.get_leaf_id()


def test_search_text_is_sent_only_when_the_row_text_does_not_say_it(tmp_path: Path) -> None:
    source = branchy_session(tmp_path / "s", tmp_path, turns=12)
    manager = SessionManager.open(source, read_only=True)
    tree = session_payload(manager).tree
    flat = TreeModel(manager.get_tree(), manager.get_leaf_id()).flat()
    for hay, full, text in zip(tree["hay"], flat.haystacks, flat.texts, strict=True):
        if hay:
            assert hay == full
        else:  # the page derives it, and finds the same words
            assert derived_haystack(text).split() == full.split()
    assert any(tree["hay"]) and not all(tree["hay"])  # tool results carry theirs, plain chat does not


def test_the_summary_counts_the_whole_file(tmp_path: Path) -> None:
    manager = SessionManager.open(FIXTURES / "00-tree-label-summary" / "session.jsonl", read_only=True)
    summary = session_payload(manager).summary
    raws = list(manager.iter_raw_entries())
    outputs = sum(
        r["message"]["usage"]["output"]
        for r in raws
        if r["type"] == "message" and r["message"]["role"] == "assistant"
    )
    assert summary["tokens"]["output"] == outputs
    assert summary["models"] == ["fake/fake-model"]
    assert summary["entryCount"] == len(raws)
    assert summary["cwd"] == manager.get_header().cwd


def test_export_writes_atomically_and_names_the_page_after_the_session(tmp_path: Path) -> None:
    source = hostile_session(tmp_path / "s", tmp_path)
    manager = SessionManager.open(source, read_only=True)
    assert default_html_name(manager) == f"pi-tui-session-{source.stem}.html"
    assert is_html_name("a.HTML") and is_html_name("b.htm") and not is_html_name("c.jsonl")
    out = export_html(manager, tmp_path / "deep" / "folder" / "page.html")
    page = out.read_text()
    assert [p.name for p in out.parent.iterdir()] == ["page.html"]  # no temporary file left
    for injection in INJECTIONS:
        assert injection not in page
    data = page.split('id="pi-entries">', 1)[1].split("</script>", 1)[0]
    texts = json.dumps([json.loads(line) for line in data.splitlines()])
    assert all(json.dumps(injection)[1:-1] in texts for injection in INJECTIONS)


def test_the_page_starts_in_the_users_theme_with_the_opposite_built_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.html_export.page_theme import page_palettes
    from pi_tui.view.theme import builtin_themes_dir

    theme = json.loads((builtin_themes_dir() / "light.json").read_text())
    theme["name"] = "mine"
    theme["colors"]["accent"] = "#123456"
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.json").write_text(json.dumps(theme))
    mine, other = page_palettes("mine", tmp_path)
    assert (mine["name"], mine["dark"], mine["colors"]["accent"]) == ("mine", False, "#123456")
    assert (other["name"], other["dark"]) == ("dark", True)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", value) for value in mine["colors"].values())
    monkeypatch.delenv("COLORFGBG", raising=False)  # no theme set: "system", dark without a signal
    assert [p["name"] for p in page_palettes(None, tmp_path)] == ["dark", "light"]
    assert [p["name"] for p in page_palettes("no-such-theme", tmp_path)] == ["dark", "light"]
    monkeypatch.setenv("COLORFGBG", "0;15")  # a light terminal: "system" and pairs pick light
    assert [p["name"] for p in page_palettes(None, tmp_path)] == ["light", "dark"]
    assert page_palettes("mine/dark", tmp_path)[0]["name"] == "mine"
