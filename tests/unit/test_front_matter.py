"""Front matter read with PyYAML (YAML 1.2 core schema) and the lenient key-by-key fallback."""

from __future__ import annotations

from pi_tui.resources.front_matter import parse_front_matter


def test_full_yaml_mappings_in_lists_flow_mappings_and_anchors() -> None:
    front = parse_front_matter(
        "---\n"
        "tools:\n"
        "  - name: read\n"
        "    limit: 10\n"
        "  - name: bash\n"
        "limits: {soft: 1, hard: 2}\n"
        "base: &base [a, b]\n"
        "copy: *base\n"
        'wrapped: "one \\\n'
        '  two"\n'
        "---\nbody\n"
    )
    assert front.warnings == []
    assert front.data == {
        "tools": [{"name": "read", "limit": 10}, {"name": "bash"}],
        "limits": {"soft": 1, "hard": 2},
        "base": ["a", "b"],
        "copy": ["a", "b"],
        "wrapped": "one two",
    }


def test_yaml_1_2_core_schema_not_yaml_1_1() -> None:
    front = parse_front_matter("---\non: yes\noff: no\nversion: 012\nwhen: 2024-01-02\n1: one\n---\n")
    assert front.data == {"on": "yes", "off": "no", "version": 12, "when": "2024-01-02", "1": "one"}


def test_cursor_globs_and_tabs_and_regex_escapes_are_read_leniently() -> None:
    front = parse_front_matter(
        "---\nglobs: *.ts,*.tsx\ndescription: Use it: when asked  # a note\n"
        'scope:\n\t- text\ncondition: ["\\d+", x]\n---\n'
    )
    assert front.data == {
        "globs": "*.ts,*.tsx",
        "description": "Use it: when asked",  # as pi-tui always read it
        "scope": ["text"],
        "condition": ["\\d+", "x"],
    }
    assert len(front.warnings) == 1 and "line 6" in front.warnings[0] and "\\d" in front.warnings[0]


def test_a_bad_line_loses_only_itself() -> None:
    front = parse_front_matter("---\na: 1\njust words\nb: [x, y\nc: 'ok'\n---\nbody")
    assert front.data == {"a": 1, "b": "[x, y", "c": "ok"}
    assert any("line 3" in warning and "just words" in warning for warning in front.warnings)
    assert any("line 4" in warning and "unclosed" in warning for warning in front.warnings)
    assert front.body == "body"


def test_front_matter_that_is_not_a_mapping_is_ignored_with_a_warning() -> None:
    front = parse_front_matter("---\n- a\n- b\n---\nbody")
    assert front.present and front.data == {} and front.body == "body"
    assert front.warnings and "not a mapping" in front.warnings[0]


def test_alias_bombs_are_refused_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    front = parse_front_matter("---\n" + "\n".join(lines) + "\n---\n")
    assert front.data == {}
    assert front.warnings and "too many" in front.warnings[0]
