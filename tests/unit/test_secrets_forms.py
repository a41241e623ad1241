"""Issue 28: the shapes a secret can take (JSON escapes, base64 of pattern matches, simple
transforms), the time budget of the user's regexes, and the environment children get."""

from __future__ import annotations

import base64
import json
import re
import time

import pytest

from pi_tui.secrets import active, child_env
from pi_tui.secrets.entries import SecretEntry, compile_user_regex, parse_secrets_yml
from pi_tui.secrets.obfuscator import REGEX_BUDGET, Obfuscator, Pattern
from pi_tui.secrets.patterns import BUILTIN_PATTERNS
from pi_tui.secrets.sources import SecretsSetup, with_derived_forms

KEY = b"k" * 32
VALUE = 'pä"ss\\word\t-42'


def obfuscator(*values: str, patterns: list[Pattern] | None = None) -> Obfuscator:
    plain = with_derived_forms({value: SecretEntry("plain", value, source="test") for value in values})
    return Obfuscator(KEY, plain, patterns or [])


def test_every_json_escaping_of_a_value_becomes_its_placeholder() -> None:
    o = obfuscator(VALUE)
    placeholder = o.placeholder(VALUE)
    once = json.dumps({"pw": VALUE})  # \u00e4 and \t escaped
    twice = json.dumps({"content": json.dumps({"pw": VALUE}, ensure_ascii=False)})
    for text in (VALUE, once, twice, json.dumps(once)):  # up to two levels inside a string
        hidden = o.hide_text(text)
        assert "word" not in hidden and placeholder in hidden, hidden
    # the bytes check sees the escaped forms too (no false "nothing to hide")
    assert o.might_hide(json.dumps({"a": json.dumps({"b": VALUE})}).encode())


def test_a_placeholder_in_a_json_text_comes_back_escaped() -> None:
    o = obfuscator(VALUE)
    placeholder = o.placeholder(VALUE)
    o.hide_text(VALUE)
    written = o.reveal({"path": "c.json", "content": json.dumps({"pw": placeholder})})
    assert json.loads(written["content"]) == {"pw": VALUE}
    assert o.reveal_text(f"echo {placeholder}") == f"echo {VALUE}"  # not JSON: the value as it is
    assert o.reveal_text('{"pw": "<<secret:0000000000>>"}') == '{"pw": "<<secret:0000000000>>"}'


def test_simple_transforms_of_a_value_are_hidden() -> None:
    value = "hunter2-correct-horse"
    o = obfuscator(value)
    for form in (value[::-1], value.encode().hex(), value.encode().hex().upper()):
        assert form not in o.hide_text(f"out: {form} end")
    spaced = obfuscator("two words here")
    assert "two%20words" not in spaced.hide_text("q=two%20words%20here&x")
    assert "two+words" not in spaced.hide_text("q=two+words+here&x")


def test_pattern_matches_are_found_inside_base64() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    patterns = [
        Pattern(name, re.compile(source), word_start=True) for name, source in BUILTIN_PATTERNS.items()
    ]
    o = Obfuscator(KEY, {}, patterns)
    for prefix in ("", "TOKEN=", "x " * 7):
        encoded = base64.b64encode(f"{prefix}{token}\n".encode()).decode()
        hidden = o.hide_text(f"Authorization: Basic {encoded}\nnext line")
        assert "<<secret:" in hidden and hidden.endswith("\nnext line")
        left = re.sub(r"<<secret:[0-9a-f]{10}>>", " ", hidden.split(" ", 2)[2]).split()[0]
        assert token.encode() not in base64.b64decode(left + "===", validate=False)
    urlsafe = base64.urlsafe_b64encode(f"key {token}".encode()).decode()
    assert "<<secret:" in o.hide_text(urlsafe)
    plain_code = "def some_function_name_that_is_long(argument_number_one): return path/to/some/file"
    assert o.hide_text(plain_code) == plain_code


def test_a_regex_over_its_budget_is_dropped_and_reported() -> None:
    slow = Pattern("proj/.agent/secrets.yml:3", compile_user_regex(r"(x+x+)+y"), timed=True)
    quick = Pattern("proj/.agent/secrets.yml:1", compile_user_regex(r"acct-[0-9]{6}"), "replace", timed=True)
    o = Obfuscator(KEY, {}, [slow, quick], user_regexes=True)
    o.begin_request()
    began = time.perf_counter()
    hidden = o.hide({"a": "x" * 3000, "b": "acct-123456"})
    assert time.perf_counter() - began < REGEX_BUDGET * 4
    assert hidden == {"a": "x" * 3000, "b": "***********"}
    (refusal,) = o.take_refusals()
    assert refusal[0] == r"(x+x+)+y" and refusal[1].startswith("proj/.agent/secrets.yml:3: the regex")
    assert o.patterns == [quick] and o.take_refusals() == []


def test_outbound_reports_a_refused_regex_once(capsys: pytest.CaptureFixture[str]) -> None:
    slow = Pattern("s.yml:2", compile_user_regex(r"(x+x+)+y"), timed=True)
    setup = SecretsSetup(Obfuscator(KEY, {}, [slow], user_regexes=True), [], {}, True)
    active.install(setup)
    body = {"m": "x" * 3000}
    active.outbound(body, json.dumps(body).encode())
    active.outbound(body, json.dumps(body).encode())
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("pi-tui: warning: secrets: s.yml:2: the regex")
    assert setup.problems == [warnings[0].removeprefix("pi-tui: warning: secrets: ")]


def test_a_catastrophic_regex_is_refused_when_the_file_is_read() -> None:
    load = parse_secrets_yml(
        "- type: regex\n  content: '(a+)+$'\n- type: regex\n  content: 'ok-[0-9]+'\n", "s.yml"
    )
    assert [entry.content for entry in load.entries] == ["ok-[0-9]+"]
    (problem,) = load.problems
    assert problem.startswith("s.yml:1: the regex '(a+)+$'")


def test_children_get_no_server_token_and_no_provider_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_TUI_SERVE_TOKEN", "serve-token-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    monkeypatch.setenv("MY_MODELS_KEY", "held-by-models-json-1")
    monkeypatch.setenv("APP_SECRET", "the-app-needs-it-123")
    setup = SecretsSetup(Obfuscator(KEY, {}), [], {}, False, credentials={"held-by-models-json-1"})
    active.install(setup)
    child_env.hold("given-on-the-command-line")
    monkeypatch.setenv("COPY_OF_TOKEN", "given-on-the-command-line")
    env = child_env.child_environment({"EXTRA": "set-on-purpose"})
    for name in ("PI_TUI_SERVE_TOKEN", "OPENAI_API_KEY", "MY_MODELS_KEY", "COPY_OF_TOKEN"):
        assert name not in env
    assert env["APP_SECRET"] == "the-app-needs-it-123" and env["EXTRA"] == "set-on-purpose"
    assert env["PATH"]
