"""``pi-tui serve``: the agent and its session trees over HTTP and Server-Sent Events.

One process holds any number of live sessions (:mod:`.live`), each an ordinary AgentSession
with its own command queue and numbered event log (:mod:`.event_log`); :mod:`.hub` opens,
creates, forks and deletes them; :mod:`.app` is the HTTP surface (documented in
``docs/server.md``); :mod:`.command` parses the command line and runs uvicorn.
"""
