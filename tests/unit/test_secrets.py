"""Secret obfuscation: each source, mode and built-in pattern, overlaps, unicode (issue 17)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from pi_tui.config.settings import Settings
from pi_tui.secrets import active
from pi_tui.secrets.entries import SecretEntry, load_secret_files, parse_secrets_yml
from pi_tui.secrets.environment import environment_secrets
from pi_tui.secrets.obfuscator import PLACEHOLDER, Obfuscator, Pattern, trie_pattern
from pi_tui.secrets.patterns import BUILTIN_PATTERNS
from pi_tui.secrets.sources import build_secrets, placeholder_key

KEY = b"k" * 32


def obfuscator(*values: str, mode: str = "obfuscate", patterns: list[Pattern] | None = None) -> Obfuscator:
    return Obfuscator(KEY, {v: SecretEntry("plain", v, mode) for v in values}, patterns or [])  # type: ignore[arg-type]


def enabled(**secrets: object) -> Settings:
    return Settings.model_validate({"secrets": {"enabled": True, **secrets}})


def test_a_value_becomes_the_same_placeholder_everywhere_and_comes_back() -> None:
    o = obfuscator("hunter2-longer-pass")
    hidden = o.hide_text("a=hunter2-longer-pass b=hunter2-longer-pass")
    placeholders = PLACEHOLDER.findall(hidden)
    assert len(placeholders) == 2 and placeholders[0] == placeholders[1]
    assert "hunter2" not in hidden and o.reveal_text(hidden) == "a=hunter2-longer-pass b=hunter2-longer-pass"
    # two tool results, one run: the same placeholder in both, and both come back
    first, second = o.hide({"r": "pw: hunter2-longer-pass"}), o.hide(["again hunter2-longer-pass!"])
    assert PLACEHOLDER.findall(first["r"]) == PLACEHOLDER.findall(second[0]) == placeholders[:1]
    assert o.reveal({"args": [first["r"], {"x": second[0]}]}) == {
        "args": ["pw: hunter2-longer-pass", {"x": "again hunter2-longer-pass!"}]
    }


def test_placeholders_never_hold_a_newline_and_keep_their_line() -> None:
    o = obfuscator("line-one-secret\nline-two")
    hidden = o.hide_text("KEY=line-one-secret\nline-two\nNEXT=1")
    assert hidden.splitlines()[0].startswith("KEY=<<secret:") and hidden.endswith("\nNEXT=1")
    assert "\n" not in PLACEHOLDER.search(hidden).group()


def test_an_unknown_placeholder_stays_as_it_is() -> None:
    o = obfuscator("some-secret-value")
    assert o.reveal_text("use <<secret:0123456789>> here") == "use <<secret:0123456789>> here"


def test_replace_mode_is_one_way_and_keeps_the_length() -> None:
    o = obfuscator("replace-me-please", mode="replace")
    hidden = o.hide_text("x replace-me-please y")
    assert hidden == "x " + "*" * 17 + " y"
    assert o.reveal_text(hidden) == hidden
    custom = Obfuscator(KEY, {"abcdefgh99": SecretEntry("plain", "abcdefgh99", "replace", "[gone]")})
    assert custom.hide_text("<abcdefgh99>") == "<[gone]>"


def test_one_value_inside_another_and_values_sharing_a_stretch() -> None:
    o = obfuscator("abcdefgh12", "xxabcdefgh12yy", "efgh12345678")
    # the longer value wins where both start; a value starting inside another extends the span
    assert o.hide_text("xxabcdefgh12yy").count("<<secret:") == 1
    hidden = o.hide_text("abcdefgh12345678")
    assert hidden.count("<<secret:") == 1 and "345678" not in hidden and "abcd" not in hidden
    assert o.reveal_text(hidden) == "abcdefgh12345678"
    # a pattern overlapping a plain value: one span, nothing of either left
    both = obfuscator(
        "AKIAIOSFODNN7EXAMPLEzz", patterns=[Pattern("aws", re.compile(BUILTIN_PATTERNS["aws-access-key"]))]
    )
    assert both.hide_text("k=AKIAIOSFODNN7EXAMPLEzz;").count("<<secret:") == 1


def test_unicode_values_and_text() -> None:
    o = obfuscator("pässwörd-ünïcode", "秘密のパスワード123")
    hidden = o.hide_text("→ pässwörd-ünïcode ← and 秘密のパスワード123 🎉")
    assert hidden.startswith("→ <<secret:") and hidden.endswith("🎉") and "ö" not in hidden
    assert o.reveal_text(hidden) == "→ pässwörd-ünïcode ← and 秘密のパスワード123 🎉"
    payload = json.dumps({"t": "pässwörd-ünïcode"}, ensure_ascii=False).encode()
    assert o.might_hide(payload)
    assert not o.might_hide(b'{"t": "nothing here"}')


def test_json_escaped_values_are_caught_before_encoding() -> None:
    o = obfuscator('quote"and\\back-slash')
    payload = json.dumps({"t": 'x quote"and\\back-slash y'}).encode()
    assert o.might_hide(payload)
    assert "back-slash" not in o.hide({"t": 'x quote"and\\back-slash y'})["t"]


@pytest.mark.parametrize(
    ("name", "token"),
    [
        ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
        ("github-token", "ghp_" + "a" * 36),
        ("github-token", "github_pat_" + "B" * 30),
        ("gitlab-token", "glpat-" + "x1" * 10),
        ("slack-token", "xoxb-1234567890-abcdefghij"),
        ("sk-key", "sk-ant-" + "Z9" * 12),
        ("sk-key", "sk-proj-" + "q" * 24),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc==\n-----END RSA PRIVATE KEY-----"),
    ],
)
def test_each_built_in_pattern(name: str, token: str) -> None:
    o = Obfuscator(KEY, {}, [Pattern(name, re.compile(BUILTIN_PATTERNS[name]), word_start=True)])
    hidden = o.hide_text(f"before {token} after")
    assert hidden.startswith("before <<secret:") and hidden.endswith(" after"), hidden
    assert o.reveal_text(hidden) == f"before {token} after"
    assert o.might_hide(json.dumps(f"x\n{token}").encode())  # escaping cannot hide it
    # inside a longer word it is not a token of that kind
    assert o.hide_text(f"X{token}") == f"X{token}" or name == "private-key"


def test_built_in_patterns_can_be_switched_off(tmp_path: Path) -> None:
    setup = build_secrets(enabled(disabledPatterns=["jwt", "nope"]), str(tmp_path), tmp_path, environ={})
    names = [pattern.name for pattern in setup.obfuscator.patterns]
    assert "jwt" not in names and "github-token" in names
    assert setup.problems == [
        f"secrets.disabledPatterns: unknown pattern 'nope' ({', '.join(BUILTIN_PATTERNS)})"
    ]


def test_environment_variables_that_look_secret() -> None:
    found = environment_secrets(
        {
            "STRIPE_SECRET_KEY": "sk_live_0123456789",
            "GITHUB_TOKEN": "short",  # under 8 characters
            "DB_PASSWORD": "pa55word!!",
            "MY_CREDENTIALS": "user:pass:extra",
            "PWD": "/home/user/project",
            "HOME": "/home/user",
            "DATABASE_URL": "postgres://app:s3cretpw@db:5432/app",
            "EDITOR": "vim",
        }
    )
    assert found == {
        "sk_live_0123456789": "STRIPE_SECRET_KEY",
        "pa55word!!": "DB_PASSWORD",
        "user:pass:extra": "MY_CREDENTIALS",
        "s3cretpw": "DATABASE_URL",
        "postgres://app:s3cretpw@db:5432/app": "DATABASE_URL",
    }


def test_secrets_yml_entries_and_problems(tmp_path: Path) -> None:
    text = """# my secrets
- type: plain
  content: "quoted \\"value\\" here"
  mode: obfuscate
- type: regex
  content: 'ACME-[0-9]{4}'   # account ids
  mode: replace
  replacement: ACME-XXXX
  flags: i
- content: plain-by-default
- type: regex
  content: "(unclosed"
- type: magic
  content: x
- mode: replace
"""
    load = parse_secrets_yml(text, "s.yml")
    assert [(e.kind, e.content, e.mode, e.replacement) for e in load.entries] == [
        ("plain", 'quoted "value" here', "obfuscate", None),
        ("regex", "ACME-[0-9]{4}", "replace", "ACME-XXXX"),
        ("plain", "plain-by-default", "obfuscate", None),
    ]
    assert load.entries[1].flags == re.IGNORECASE
    assert [problem.split(": ", 1)[0] for problem in load.problems] == ["s.yml:11", "s.yml:13", "s.yml:15"]
    assert "bad regex" in load.problems[0] and "type must be" in load.problems[1]
    assert "content is missing" in load.problems[2]
    assert parse_secrets_yml("key: value\n", "t.yml").problems == [
        "t.yml:1: expected a list entry starting with '- '"
    ]


def test_project_entries_override_global_ones(tmp_path: Path) -> None:
    (tmp_path / "global.yml").write_text("- content: same-secret-value\n  mode: obfuscate\n")
    (tmp_path / "project.yml").write_text("- content: same-secret-value\n  mode: replace\n")
    load = load_secret_files([tmp_path / "global.yml", tmp_path / "project.yml", tmp_path / "missing.yml"])
    assert [(e.content, e.mode) for e in load.entries] == [("same-secret-value", "replace")]


def test_known_keys_are_secrets_even_when_the_setting_is_off(tmp_path: Path) -> None:
    from pi_tui.ai.models import ModelRegistry

    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "p": {
                        "baseUrl": "http://x",
                        "api": "openai-completions",
                        "apiKey": "MY_KEY_VAR",
                        "headers": {"X-Token": "literal-header-token"},
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    (tmp_path / "auth.json").write_text(json.dumps({"q": {"type": "api_key", "key": "saved-auth-key-123"}}))
    registry = ModelRegistry(tmp_path / "models.json")
    environ = {
        "MY_KEY_VAR": "resolved-from-env-99",
        "ANTHROPIC_API_KEY": "sk-ant-envkey-0000",
        "SOME_TOKEN": "t0k3n-not-known",
    }
    setup = build_secrets(Settings(), str(tmp_path), tmp_path, registry, "cli-key-abcdefgh", environ)
    derived = ("base64 of", "reversed of", "hex of", "URL-encoded of")
    named = {value for value, entry in setup.obfuscator.plain.items() if not entry.source.startswith(derived)}
    assert named == {
        "cli-key-abcdefgh",
        "sk-ant-envkey-0000",
        "saved-auth-key-123",
        "resolved-from-env-99",
        "literal-header-token",
    }
    assert "t0k3n-not-known" not in setup.obfuscator.plain and not setup.obfuscator.patterns  # setting off
    hidden = setup.obfuscator.hide_text(base64.b64encode(b"key=saved-auth-key-123\n").decode())
    assert hidden.count("<<secret:") == 1  # its base64 form too
    assert not setup.enabled


def test_the_placeholder_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = placeholder_key(tmp_path)
    assert placeholder_key(tmp_path) == first and len(first) == 32
    assert (tmp_path / "secrets.key").stat().st_mode & 0o777 == 0o600
    a, b = Obfuscator(first, {}), Obfuscator(first, {})
    assert a.placeholder("v") == b.placeholder("v") != Obfuscator(b"other" * 7, {}).placeholder("v")


def test_request_credentials_join_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(active, "_current", obfuscator("first-secret-value"))
    active.add_credentials(["from-a-command-123", "short"])
    plain = active.current().plain
    derived = ("base64 of", "reversed of", "hex of", "URL-encoded of")
    assert {v for v, e in plain.items() if not e.source.startswith(derived)} == {
        "first-secret-value",
        "from-a-command-123",
    }
    assert len(plain) > 2  # with the base64 and other forms of the new one
    sent = active.outbound({"m": "key from-a-command-123"}, b'{"m":"key from-a-command-123"}')
    assert b"from-a-command" not in sent and b"<<secret:" in sent
    untouched = b'{"m":"nothing"}'
    assert active.outbound({"m": "nothing"}, untouched) is untouched
    revealed = active.inbound({"cmd": json.loads(sent)["m"]})
    assert revealed == {"cmd": "key from-a-command-123"}


def test_the_trie_finds_the_longest_value_and_survives_long_ones() -> None:
    long_value = "-----" + "A" * 5000
    pattern = re.compile(trie_pattern(["ab", "abcd", "abce", long_value, *[f"v{i:03d}" for i in range(100)]]))
    assert [m.group() for m in pattern.finditer("abcd ab abce v042 " + long_value)] == [
        "abcd",
        "ab",
        "abce",
        "v042",
        long_value,
    ]


def test_the_chat_marks_placeholders_outside_code() -> None:
    from pi_tui.secrets.display import mark_placeholders

    p = "<<secret:0123456789>>"
    assert mark_placeholders(f"use {p} now") == f"use `{p}` now"
    assert mark_placeholders(f"```\nKEY={p}\n```\nand {p}") == f"```\nKEY={p}\n```\nand `{p}`"
    assert mark_placeholders(f"`{p}` stays") == f"`{p}` stays"
    assert mark_placeholders("nothing") == "nothing"


def test_values_of_every_character_class_are_found_anywhere() -> None:
    values = ("AbC123xyz789", "ab_cd-ef_123", "a/b+c=d.e~f9", "with space!", "ünï-cöde-välue")
    o = obfuscator(*values)
    text = "é→ xxAbC123xyz789yy … ab_cd-ef_123 ü path/a/b+c=d.e~f9/x ß say with space! ünï-cöde-välue end"
    hidden = o.hide_text(text)
    assert not any(value in hidden for value in values), hidden
    assert hidden.count("<<secret:") == 5 and hidden.startswith("é→ xx<<secret:")
    assert o.reveal_text(hidden) == text


def test_the_projects_env_files_are_read_and_watched(tmp_path: Path) -> None:
    from pi_tui.secrets.environment import dotenv_secrets, parse_dotenv
    from pi_tui.secrets.sources import changed

    assert parse_dotenv(
        "# c\nexport A_TOKEN='quoted value 1'\nB_KEY=plain-value-22 # note\nbad line\nC=\"x\"\n"
    ) == {
        "A_TOKEN": "quoted value 1",
        "B_KEY": "plain-value-22",
        "C": "x",
    }
    (tmp_path / ".env").write_text("DB_PASSWORD=from-dotenv-pw\nPORT=8080\n")
    (tmp_path / ".env.local").write_text("STRIPE_SECRET=sk_local_1234567\n")
    (tmp_path / ".env.example").write_text("DB_PASSWORD=change-me-please\n")
    found, watched = dotenv_secrets(tmp_path)
    assert found == {"from-dotenv-pw": ".env DB_PASSWORD", "sk_local_1234567": ".env.local STRIPE_SECRET"}
    assert sorted(path.name for path in watched) == [".env", ".env.local"]
    setup = build_secrets(enabled(), str(tmp_path), tmp_path / "agent", environ={})
    assert {"from-dotenv-pw", "sk_local_1234567"} <= set(setup.obfuscator.plain)
    assert setup.sources[".env files"] == 2
    assert not changed(setup.watched, tmp_path)
    (tmp_path / ".env.production").write_text("API_TOKEN=prod-token-99999\n")
    assert changed(setup.watched, tmp_path)
    rebuilt = setup.rebuild()
    assert "prod-token-99999" in rebuilt.obfuscator.plain and not changed(rebuilt.watched, tmp_path)
    assert build_secrets(Settings(), str(tmp_path), tmp_path / "agent", environ={}).watched == {}  # off
