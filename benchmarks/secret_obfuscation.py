"""Secret obfuscation cost (issue 17): a 1 MB request with 200 secrets, beside building it.

The request is a chat of code-like tool results (pi-tui's own sources) with 200 secrets spread
through it, sent to an openai-completions model. Rows (best of N, in process):

1. building the request body and encoding it (what every turn costs anyway);
2. the outbound check and hiding (``secrets.active.outbound``): first time (setting up the
   secrets, printed apart, left out), and again for the next turn's request (the same history:
   each text's hidden form is remembered);
3. the same check on a request holding no secret (the usual case): 200 secrets, and only the 3
   provider keys pi-tui knows when ``secrets.enabled`` is off;
4. ``hide_text`` of the 1 MB as one string, and revealing a tool call's arguments.

Target: obfuscating the 1 MB request with 200 secrets <= 20 ms.

Run: ``python benchmarks/secret_obfuscation.py [--runs 5] [--secrets 200] [--size 1000000]``.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_tui import jsonio  # noqa: E402
from pi_tui.ai.registry import get_client  # noqa: E402
from pi_tui.ai.types import Context, Model, StreamOptions  # noqa: E402
from pi_tui.messages import TextContent, ToolResultMessage, UserMessage  # noqa: E402
from pi_tui.secrets import active  # noqa: E402
from pi_tui.secrets.entries import SecretEntry  # noqa: E402
from pi_tui.secrets.obfuscator import Obfuscator, Pattern  # noqa: E402
from pi_tui.secrets.patterns import BUILTIN_PATTERNS  # noqa: E402
from pi_tui.secrets.sources import SecretsSetup, with_derived_forms  # noqa: E402


def best(run: Callable[[], object], runs: int, setup: Callable[[], object] | None = None) -> float:
    """Best of ``runs`` timings of ``run``, in ms; ``setup`` runs untimed before each (so a
    "first time" figure is not the difference of two noisy figures)."""
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return min(times) * 1000


def corpus(size: int) -> list[str]:
    """Chunks of ~8 KB of real Python source, as tool results would carry."""
    text = "".join(path.read_text() for path in sorted((ROOT / "pi_tui").rglob("*.py")))
    while len(text) < size:
        text += text
    text = text[:size]
    return [text[i : i + 8000] for i in range(0, len(text), 8000)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--secrets", type=int, default=200)
    parser.add_argument("--size", type=int, default=1_000_000)
    args = parser.parse_args(argv)

    chooser = random.Random(17)
    alphabet = string.ascii_letters + string.digits
    values = [
        "".join(chooser.choice(alphabet) for _ in range(chooser.randint(12, 40))) for _ in range(args.secrets)
    ]
    chunks = corpus(args.size)
    seeded = list(chunks)
    for index, value in enumerate(values):  # every secret somewhere in the history
        spot = index % len(seeded)
        seeded[spot] = seeded[spot][:4000] + f"\nTOKEN_{index}={value}\n" + seeded[spot][4000:]

    def context(parts: list[str]) -> Context:
        messages: list = [UserMessage(content="go", timestamp=0)]
        for number, part in enumerate(parts):
            messages.append(
                ToolResultMessage(
                    tool_call_id=f"c{number}", tool_name="read", content=[TextContent(text=part)], timestamp=0
                )
            )
        return Context(system_prompt="You are a coding agent.", messages=messages)

    model = Model(id="m", name="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9")
    client = get_client(model.api)
    options = StreamOptions(api_key="k")
    with_secrets = context(seeded)
    without = context(chunks)

    def build(ctx: Context) -> tuple[object, bytes]:
        request = client.build_request(model, ctx, options)
        return request.body, jsonio.dumps(request.body)

    body, payload = build(with_secrets)
    clean_body, clean_payload = build(without)
    built = best(lambda: build(with_secrets), args.runs)

    # as pi-tui sets them up: each value with its base64, reversed, hex and URL-encoded forms
    plain = with_derived_forms({value: SecretEntry("plain", value, source="bench") for value in values})
    patterns = [Pattern(name, re.compile(text), word_start=True) for name, text in BUILTIN_PATTERNS.items()]

    def install(obfuscator: Obfuscator) -> None:
        active.install(SecretsSetup(obfuscator, [], {}, True))

    def fresh() -> None:
        install(Obfuscator(b"k" * 32, plain, patterns))

    install(Obfuscator(b"k" * 32, plain, patterns))
    sent = active.outbound(body, payload)
    assert not any(value.encode() in sent for value in values), "a secret was left in the request"
    first = best(lambda: active.outbound(body, payload), args.runs, setup=fresh)
    again = best(lambda: active.outbound(body, payload), args.runs)

    clean_200 = best(lambda: active.outbound(clean_body, clean_payload), args.runs, setup=fresh)
    made = best(lambda: Obfuscator(b"k" * 32, plain, patterns), args.runs)
    names = [f"sk-provider-key-{n}-abcdefgh" for n in range(3)]
    keys = with_derived_forms({name: SecretEntry("plain", name) for name in names})
    install(Obfuscator(b"k" * 32, keys, []))
    clean_keys = best(lambda: active.outbound(clean_body, clean_payload), args.runs)
    obfuscator = Obfuscator(b"k" * 32, plain, patterns)
    whole = "".join(seeded)
    hide_one = best(lambda: obfuscator.hide_text(whole), args.runs)
    hidden = obfuscator.hide_text(whole)
    arguments = {"path": "config.ini", "content": hidden[:20000]}
    reveal = best(lambda: obfuscator.reveal(arguments), args.runs)
    active.install(None)

    size = len(payload) / 1e6
    print(
        f"request: {size:.2f} MB, {len(with_secrets.messages)} messages, {args.secrets} secrets + "
        f"{len(patterns)} built-in patterns"
    )
    print()
    print("| work | time | target |")
    print("|---|---|---|")
    print(f"| build + encode the request body (every turn) | {built:.1f} ms | - |")
    ok = "met" if first <= 20 else "MISSED"
    label = "hide the secrets of that request, first time (check + hide + encode again)"
    print(f"| {label} | {first:.1f} ms | <= 20 ms: {ok} |")
    print(f"| set up the 200 secrets and patterns (once per run, and after /reload) | {made:.1f} ms | - |")
    print(f"| same request again (the next turn) | {again:.1f} ms | - |")
    print(f"| check a request holding no secret, 200 secrets + patterns | {clean_200:.1f} ms | - |")
    print(f"| check a request holding no secret, 3 provider keys (setting off) | {clean_keys:.1f} ms | - |")
    print(f"| hide_text of the whole 1 MB as one string | {hide_one:.1f} ms | - |")
    print(f"| reveal a 20 KB tool call's arguments | {reveal:.2f} ms | - |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
