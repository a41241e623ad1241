"""TTSR matching cost on a long stream: incremental manager vs re-scanning.

Streams 1 MB of realistic assistant text (prose, Markdown, code) in 10-character deltas through
a :class:`TtsrManager` holding 30 realistic rules (varied regexes, some with look-behind,
look-ahead and ``^``/``$`` anchors, text / thinking / tool scopes). The text is clean except for
three violations planted at 90%, 95% and 99%. Printed:

- the manager: total checking time, time per delta over the first and last 10% of the stream
  and their ratio (target: last within 1.5x of first, i.e. no growth with the buffer), total
  (target: under 1 s), and which rules fired where;
- naive whole-buffer re-scanning (every eligible condition searched over the whole buffer on
  every delta, as omp does): run on the first 100 KB and extrapolated to 1 MB quadratically;
- bounded-window re-scanning (search the last 64 KiB + delta on every delta, no resume
  positions, the literal reading of "search only the region that can hold a new match"): run
  on the first 128 KB and extrapolated linearly from its steady state (window full);
- a catastrophic condition ``(a+)+$`` fed 30,000 ``a`` then ``b``: stopped by the per-search
  timeout, disabled with a warning, while the other rules keep matching.

Run: ``python benchmarks/ttsr_stream.py``. Wall times (``time.perf_counter``), best of 3 for the
manager; a small shared VM jitters, so compare ratios rather than absolute figures.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_tui.config.settings import TtsrSettings
from pi_tui.ttsr.manager import TtsrManager
from pi_tui.ttsr.model import MatchContext, Rule, ScopeToken

SIZE = 1_000_000
DELTA = 10
TEXT = MatchContext("text")

TEXT_TOOL = (ScopeToken("text"), ScopeToken("tool"))
THINKING = (ScopeToken("thinking"),)
PROSE = (ScopeToken("text"), ScopeToken("thinking"))
BASH = (ScopeToken("tool", "bash"),)
EDIT_PY = (ScopeToken("tool", "edit", "*.py"), ScopeToken("tool", "write", "*.py"))

# (name, conditions, scopes or None for the default text + tools)
RULES: list[tuple[str, list[str], tuple[ScopeToken, ...] | None]] = [
    ("bare-except", [r"^\s*except\s*:"], None),
    ("mutable-default", [r"def \w+\([^)]*=\s*(?:\[\]|\{\}|set\(\))"], None),
    ("utcnow", [r"datetime\.utcnow\(\)"], None),
    ("debugger", [r"\bbreakpoint\(\)", r"\bpdb\.set_trace\(\)"], None),
    ("ts-any", [r"(?<![\w$]):\s*any\b(?!\w)", r"\bas any\b"], None),
    ("ioutil", [r'"io/ioutil"'], None),
    ("box-leak", [r"Box::leak\b"], None),
    ("eval", [r"(?<![.\w])eval\("], None),
    ("star-import", [r"^from\s+\S+\s+import\s+\*\s*$"], None),
    ("console-log", [r"console\.log\("], None),
    ("ai-disclaimer", [r"(?i)\bas an ai (?:language )?model\b"], PROSE),
    ("print-debug", [r"^\s*print\(f?[\"']DEBUG"], None),
    ("type-ignore", [r"^.*#\s*type:\s*ignore\s*$"], None),
    ("os-system", [r"\bos\.system\("], None),
    ("shell-true", [r"subprocess\.\w+\([^)\n]*shell\s*=\s*True"], None),
    ("hardcoded-secret", [r"(?i)\b(?:password|secret|api[_-]?key)\s*=\s*[\"'][^\"'\n]{8,}[\"']"], None),
    ("unwrap", [r"\.unwrap\(\)(?!\s*//\s*ok)"], None),
    ("long-sleep", [r"\btime\.sleep\(\s*\d{2,}"], None),
    ("force-push", [r"(?<=\s|^)git push (?:-f|--force)\b"], BASH),
    ("rm-root", [r"\brm\s+-[rRf]{2,}\s+/(?:\s|$)"], BASH),
    ("chmod-777", [r"\bchmod\s+(?:-R\s+)?777\b"], BASH),
    ("select-star", [r"(?i)\bselect\s+\*\s+from\b"], TEXT_TOOL),
    ("apology", [r"(?i)\bI (?:sincerely )?apologi[sz]e\b"], THINKING),
    ("noqa-bare", [r"#\s*noqa(?!:)\b"], None),
    ("ts-ignore", [r"@ts-ignore\b"], None),
    ("js-var", [r"(?<![\w.])var\s+[A-Za-z_$][\w$]*\s*="], None),
    ("rust-unsafe", [r"\bunsafe\s*\{"], None),
    ("py-assert-tuple", [r"\bassert\s*\(.+,.+\)\s*$"], EDIT_PY),
    ("todo-panic", [r"\b(?:todo|unimplemented)!\(\)"], None),
    ("gap-words", [r"(?i)\b(?:lorem ipsum|foo bar baz)\b"], None),
]

PROSE_TEXT = (
    "the function returns a value when the input is valid and otherwise raises an error so "
    "callers can handle it we keep the buffer small because each request arrives in pieces "
    "parsing happens once per line and the result is cached for the next call tests cover "
    "both paths including empty input unicode and very long lines configuration lives in one "
    "place which makes the defaults easy to find except when the secret api key is missing "
    "select the import you want to ignore and print the model"
)
WORDS = PROSE_TEXT.split(" ")

CODE = [
    "def load(path: str, *, strict: bool = False) -> dict[str, int]:",
    "    with open(path, encoding='utf-8') as handle:",
    "        data = json.load(handle)",
    "    if not isinstance(data, dict):",
    "        raise ValueError(f'{path}: expected an object')",
    "    return {key: int(value) for key, value in data.items()}",
    "    try:",
    "        result = parse(line)",
    "    except ValueError as error:",
    "        log.warning('skipping %s: %s', line, error)",
    "const total = items.reduce((sum, item) => sum + item.price, 0);",
    "let name: string = user.name ?? 'anonymous';",
    "for i, item in enumerate(items):",
    "    now = datetime.now(timezone.utc)",
    "fn main() -> Result<(), Box<dyn Error>> {",
    "    let file = File::open(path)?;",
]

PLANTED = [
    (0.90, "\n```python\ntry:\n    run()\nexcept:\n    pass\n```\n"),
    (0.95, "\nThe timestamp comes from `datetime.utcnow()` here.\n"),
    (0.99, "\n```js\nconsole.log(total);\n```\n"),
]


def make_stream(size: int = SIZE) -> str:
    rng = random.Random(7)
    parts: list[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.3:
            lines = [rng.choice(CODE) for _ in range(rng.randint(3, 10))]
            piece = "\n```python\n" + "\n".join(lines) + "\n```\n"
        else:
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
            piece = sentence.capitalize() + (". " if rng.random() < 0.8 else ".\n\n")
        parts.append(piece)
        length += len(piece)
    text = "".join(parts)[:size]
    for fraction, violation in reversed(PLANTED):
        at = text.index("\n", int(size * fraction))
        text = text[:at] + violation + text[at:]
    return text[:size]


def make_manager() -> TtsrManager:
    manager = TtsrManager(TtsrSettings(), Path("/work/project"))
    for name, conditions, scopes in RULES:
        rule = Rule(name, f"Do not: {name}", None, "benchmark", 100, conditions, scopes)
        reason = manager.add_rule(rule)
        assert reason is None, (name, reason)
    return manager


def deltas_of(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


def run_manager(deltas: list[str]) -> tuple[float, float, float, list[tuple[int, str]]]:
    """Total seconds, mean seconds per delta in the first / last 10%, and the firings."""
    manager = make_manager()
    tenth = len(deltas) // 10
    hits: list[tuple[int, str]] = []
    check = manager.check_delta
    started = time.perf_counter()
    for index in range(tenth):
        for rule in check(deltas[index], TEXT):
            hits.append((index * DELTA, rule.name))
    first_end = time.perf_counter()
    for index in range(tenth, len(deltas) - tenth):
        for rule in check(deltas[index], TEXT):
            hits.append((index * DELTA, rule.name))
    last_start = time.perf_counter()
    for index in range(len(deltas) - tenth, len(deltas)):
        for rule in check(deltas[index], TEXT):
            hits.append((index * DELTA, rule.name))
    finished = time.perf_counter()
    return (
        finished - started,
        (first_end - started) / tenth,
        (finished - last_start) / tenth,
        hits,
    )


def text_patterns() -> list[regex.Pattern[str]]:
    """The compiled conditions a text stream is checked against (what the manager uses)."""
    manager = make_manager()
    eligible = manager._eligible(TEXT)  # benchmark only: the same conditions, compiled the same
    return [condition.pattern for condition in eligible]


def run_naive(deltas: list[str], patterns: list[regex.Pattern[str]]) -> float:
    """omp's approach: every condition searched over the whole buffer on every delta."""
    buffer = ""
    started = time.perf_counter()
    for delta in deltas:
        buffer += delta
        for pattern in patterns:
            pattern.search(buffer)
    return time.perf_counter() - started


def run_window(deltas: list[str], patterns: list[regex.Pattern[str]], window: int = 64 * 1024) -> list[float]:
    """Search the last ``window`` + delta characters per delta (no resume positions).

    Returns the time of each block of 1,000 deltas.
    """
    buffer = ""
    blocks: list[float] = []
    started = time.perf_counter()
    for index, delta in enumerate(deltas, 1):
        old = len(buffer)
        buffer += delta
        pos = max(0, old - window)
        for pattern in patterns:
            match = pattern.search(buffer, pos, timeout=0.05)
            while match is not None and match.end() <= old:
                match = pattern.search(buffer, match.start() + 1, timeout=0.05)
        if index % 1000 == 0:
            now = time.perf_counter()
            blocks.append(now - started)
            started = now
    return blocks


def catastrophic() -> None:
    manager = make_manager()
    evil = Rule("catastrophic", "x", None, "benchmark", 100, [r"(a+)+$"])
    assert manager.add_rule(evil) is None
    clean = deltas_of(make_stream(20_000))
    for delta in clean:
        manager.check_delta(delta, TEXT)
    started = time.perf_counter()
    result = manager.check_delta("a" * 30_000 + "b", TEXT)
    stalled = time.perf_counter() - started
    print(f"  delta of 30,000 'a' + 'b': {stalled * 1000:.0f} ms, returned {[r.name for r in result]}")
    for warning in manager.warnings:
        print(f"  warning: {warning}")
    print(f"  disabled rules: {manager.disabled}")
    after: list[str] = []
    timings: list[float] = []
    for delta in deltas_of(" more text. datetime.utcnow() and then the rest. " * 20):
        started = time.perf_counter()
        after.extend(rule.name for rule in manager.check_delta(delta, TEXT))
        timings.append(time.perf_counter() - started)
    steady = sum(timings[1:]) / (len(timings) - 1)
    print(
        f"  next delta (eligible set rebuilt, look-back re-read once): {timings[0] * 1e6:.0f} us; "
        f"then {steady * 1e6:.1f} us per delta"
    )
    print(f"  other rules still fire: {len(after)} x {sorted(set(after))} over {len(timings)} deltas")


def main() -> None:
    text = make_stream()
    deltas = deltas_of(text)
    patterns = text_patterns()
    print(
        f"stream: {len(text):,} chars in {len(deltas):,} deltas of {DELTA}; {len(RULES)} rules, "
        f"{len(patterns)} conditions eligible for text"
    )

    runs = [run_manager(deltas) for _ in range(3)]
    total, first, last, hits = min(runs, key=lambda run: run[0])
    print("\nTtsrManager (best of 3):")
    print(f"  total checking time:          {total:.3f} s  (target < 1 s)")
    print(f"  per delta, first 10%:         {first * 1e6:.2f} us")
    print(f"  per delta, last 10%:          {last * 1e6:.2f} us")
    print(f"  last / first:                 {last / first:.2f}x  (target <= 1.5x)")
    print(f"  all runs (total s):           {', '.join(f'{run[0]:.3f}' for run in runs)}")
    print(f"  fired: {[(f'{at / len(text):.1%}', name) for at, name in hits]}")

    limit = 100_000 // DELTA
    naive = run_naive(deltas[:limit], patterns)
    print("\nNaive whole-buffer re-scan (omp's approach):")
    print(f"  first 100 KB:                 {naive:.2f} s")
    print(f"  1 MB extrapolated (x100, quadratic): ~{naive * 100:.0f} s")

    blocks = run_window(deltas[: 128_000 // DELTA], patterns)
    steady = sum(blocks[-5:]) / 5_000  # the last 50 KB of the run: the window is full
    print("\nBounded-window re-scan (64 KiB look-back, no resume positions):")
    print(f"  first 128 KB:                 {sum(blocks):.2f} s")
    print(f"  steady state per delta:       {steady * 1e6:.0f} us")
    estimate = sum(blocks) + steady * (len(deltas) - len(blocks) * 1000)
    print(f"  1 MB extrapolated (linear):   ~{estimate:.0f} s")

    print("\nCatastrophic condition (a+)+$ (timeout 50 ms per search):")
    catastrophic()


if __name__ == "__main__":
    main()
