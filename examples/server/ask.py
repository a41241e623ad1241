"""Ask a running ``pi-tui serve`` one question and print the answer as it streams.

    pi-tui serve --port 4217 --token my-long-token &
    python examples/server/ask.py --url http://127.0.0.1:4217 --token my-long-token "What is in README.md?"

A new session is made (or ``--session ID`` continues one), the event stream is opened first
(so nothing is missed: its first event is the snapshot), the prompt is posted, and the text
deltas are printed until the run ends. Only the standard library and httpx (a pi-tui
dependency) are used; docs/server.md describes every resource and event.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

import httpx


def main() -> int:
    parser = argparse.ArgumentParser(description="Ask pi-tui serve a question.")
    parser.add_argument("question")
    parser.add_argument("--url", default="http://127.0.0.1:4217")
    parser.add_argument("--token", required=True)
    parser.add_argument("--session", help="continue this session id instead of starting one")
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.token}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=httpx.Timeout(30, read=None)) as client:
        session = args.session or client.post("/sessions", json={}).raise_for_status().json()["id"]
        snapshot_seen = threading.Event()

        def post_prompt() -> None:
            snapshot_seen.wait(30)
            answer = client.post(
                f"/sessions/{session}/commands", json={"type": "prompt", "message": args.question}
            )
            if answer.status_code != 200:
                print(f"\nrefused: {answer.json().get('error')}", file=sys.stderr)

        threading.Thread(target=post_prompt, daemon=True).start()
        failed = False
        with client.stream("GET", f"/sessions/{session}/events") as events:
            for line in events.iter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                kind = event["type"]
                if kind == "snapshot":
                    snapshot_seen.set()
                elif kind == "message_update":
                    change = event.get("assistantMessageEvent", {})
                    if change.get("type") == "text_delta":
                        print(change["delta"], end="", flush=True)
                elif kind == "message_end" and event["message"].get("stopReason") == "error":
                    failed = True
                    print(f"\nerror: {event['message'].get('errorMessage')}", file=sys.stderr)
                elif kind == "agent_end":
                    break
        print(f"\n(session {session})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
