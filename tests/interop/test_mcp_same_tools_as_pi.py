"""One mcp.json, two programs: pi-tui declares and answers the reference MCP servers' tools as the
real pi 1.5.2 does (issue 32's "done when").

Both programs run ``-p`` in the same project with the same agent folder: one ``models.json``
pointing at the loopback model server and one ``mcp.json`` naming npm's server-everything (stdio)
and server-filesystem (the project as its allowed folder), each started as ``node <entry js>``,
and for ``direct`` also server-everything over streamable HTTP (``everything_http``, loopback).
What the model server received is compared:

- ``direct`` exposure: the MCP tools of the first request (the server tools and the resource
  tools), by name, description and parameter schema (canonical JSON: sorted keys; the resource
  tools are the client's own, so their descriptions are each program's prose and only their
  arguments are compared, without descriptions). pi lists a server's tools in the server's
  order, but which server comes first follows which one connected first (three runs of pi 1.5.2
  gave both orders), so the order is compared within each server, and each server's tools must
  come as one run;
- the tool results both programs saved in their session files after the model calls ``echo``,
  ``get-sum``, ``get-tiny-image`` (an image between two texts), server-filesystem's
  ``read_text_file`` on a file that is there and on one that is not (``isError``) and the HTTP
  server's ``echo``;
- ``deferred`` exposure: no MCP tool is declared, ``tool_search`` is, with the same arguments
  (its description and those of its arguments are each program's own prose, not compared);
  after the model searches for "echo", ``mcp__everything__echo`` is declared in the next request
  and answers as in pi.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_servers import (
    everything_command,
    everything_http_server,
    filesystem_command,
    mcp_json_entry,
)
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.real_pi import run_pi, write_models_json
from tests.support.requires import require_tool

pytestmark = pytest.mark.pi_interop

TIMEOUT = 120.0
ARGS = ["--provider", "loop", "--model", "m"]
RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
SERVERS = ("everything", "filesystem", "everything_http")
NOTES = "hello from the notes\n"


@dataclass
class Run:
    """What one program did: the requests the model server received and its session file."""

    requests: list[dict[str, Any]]
    session: list[dict[str, Any]]
    stderr: str


def write_mcp_json(agent: Path, project: Path, exposure: str, http_url: str | None) -> None:
    servers = {
        "everything": mcp_json_entry(everything_command(), exposure=exposure),
        "filesystem": mcp_json_entry(filesystem_command(project), exposure=exposure),
    }
    if http_url is not None:
        servers["everything_http"] = {"url": http_url, "exposure": exposure}
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))


def direct_script(project: Path) -> list[Scripted]:
    calls = [
        ToolCallSpec("mcp__everything__echo", {"message": "same as pi"}),
        ToolCallSpec("mcp__everything__get_sum", {"a": 2, "b": 3}),
        ToolCallSpec("mcp__everything__get_tiny_image", {}),
        ToolCallSpec("mcp__filesystem__read_text_file", {"path": str(project / "notes.txt")}),
        ToolCallSpec("mcp__filesystem__read_text_file", {"path": str(project / "missing.txt")}),
        ToolCallSpec("mcp__everything_http__echo", {"message": "over http"}),
    ]
    return [Scripted(tool_calls=calls), Scripted(text="done")]


def deferred_script() -> list[Scripted]:
    return [
        Scripted(tool_calls=[ToolCallSpec("tool_search", {"query": "echo"})]),
        Scripted(tool_calls=[ToolCallSpec("mcp__everything__echo", {"message": "found it"})]),
        Scripted(text="done"),
    ]


def pi_tui_env(agent: Path, home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update({"PI_CODING_AGENT_DIR": str(agent), "HOME": str(home), "PI_OFFLINE": "1"})
    env["PI_TUI_PI_AGENT_DIR"] = str(home / "no-pi-agent")  # only the agent folder's mcp.json
    return env


def session_files(agent: Path) -> set[Path]:
    return set((agent / "sessions").rglob("*.jsonl")) if (agent / "sessions").is_dir() else set()


def run(who: str, server: ModelServer, script: list[Scripted], agent: Path, project: Path, home: Path) -> Run:
    """Run ``who`` (``pi`` or ``pi-tui``) on ``-p "hi"`` with ``script`` queued."""
    server.clear_requests()
    server.queue(*script)
    before = session_files(agent)
    if who == "pi":
        done = run_pi([*ARGS, "-p", "hi"], agent_dir=agent, cwd=project, env={"HOME": str(home)}, pi="1.5.2")
    else:
        done = subprocess.run(
            [require_tool("pi-tui"), *ARGS, "-p", "hi"],
            cwd=project,
            env=pi_tui_env(agent, home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    assert done.returncode == 0, f"{who} failed ({done.returncode}): {done.stderr[-3000:]}"
    # (pi runs first: a reply it left would otherwise go to pi-tui)
    assert server.pending == 0, f"{who} stopped with scripted replies unused: {done.stdout[-2000:]}"
    (new,) = session_files(agent) - before
    lines = [json.loads(line) for line in new.read_text().splitlines() if line.strip()]
    return Run([request.body for request in server.requests], lines, done.stderr)


@dataclass
class Pair:
    pi: Run
    ours: Run
    project: Path


def run_both(tmp: Path, exposure: str, script: list[Scripted], http_url: str | None = None) -> Pair:
    project, agent, home = tmp / "project", tmp / "agent", tmp / "home"
    project.mkdir()
    home.mkdir()
    (project / "notes.txt").write_text(NOTES)
    with ModelServer() as server:
        write_models_json(agent, server.base_url)
        write_mcp_json(agent, project, exposure, http_url)
        pi = run("pi", server, script, agent, project, home)
        ours = run("pi-tui", server, script, agent, project, home)
    return Pair(pi, ours, project)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    tmp = tmp_path_factory.mktemp("mcp-direct")
    with everything_http_server(tmp) as http:
        yield run_both(tmp, "direct", direct_script(tmp / "project"), http.url)


@pytest.fixture(scope="module")
def deferred(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield run_both(tmp_path_factory.mktemp("mcp-deferred"), "deferred", deferred_script())


# --- what is compared -------------------------------------------------------------------------


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def without_descriptions(schema: Any) -> Any:
    """A JSON schema without its ``description`` texts (at any depth)."""
    if isinstance(schema, dict):
        return {key: without_descriptions(value) for key, value in schema.items() if key != "description"}
    if isinstance(schema, list):
        return [without_descriptions(value) for value in schema]
    return schema


def declared(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of a Chat Completions request: ``[{"name", "description", "parameters"}]``."""
    return [tool["function"] for tool in body.get("tools", [])]


def is_mcp(name: str) -> bool:
    return name.startswith("mcp__") or name in RESOURCE_TOOLS


def mcp_declared(body: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """MCP tool name -> (description, canonical parameters)."""
    return {
        tool["name"]: (tool.get("description", ""), canonical(tool.get("parameters")))
        for tool in declared(body)
        if is_mcp(tool["name"])
    }


def names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in declared(body)]


def server_runs(order: list[str], server: str) -> list[list[str]]:
    """The runs of consecutive names of ``server``'s tools in ``order``."""
    runs: list[list[str]] = []
    previous = False
    for name in order:
        mine = name.startswith(f"mcp__{server}__")
        if mine and previous:
            runs[-1].append(name)
        elif mine:
            runs.append([name])
        previous = mine
    return runs


def tool_results(session: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each saved tool result: its tool, its content blocks (text, or an image's type and
    data) and isError."""
    out = []
    for line in session:
        message = line.get("message") or {}
        if line.get("type") != "message" or message.get("role") != "toolResult":
            continue
        blocks = [
            {"text": block["text"]}
            if block.get("type") == "text"
            else {"image": block.get("mimeType"), "data": block.get("data")}
            for block in message.get("content", [])
        ]
        out.append(
            {"tool": message.get("toolName"), "content": blocks, "isError": bool(message.get("isError"))}
        )
    return out


# --- the tests --------------------------------------------------------------------------------


@pytest.mark.xdist_group("mcp-direct-vs-pi")  # one worker runs the fixture
def test_direct_exposure_declares_the_same_mcp_tools(direct: Pair) -> None:
    pis, ours = direct.pi.requests[0], direct.ours.requests[0]
    pi_names = [name for name in names(pis) if is_mcp(name)]
    our_names = [name for name in names(ours) if is_mcp(name)]
    # the reference itself: both servers' tools and the resource tools are declared
    assert {"mcp__everything__echo", "mcp__everything__get_sum", "mcp__filesystem__list_directory"} <= set(
        pi_names
    )
    assert set(RESOURCE_TOOLS) <= set(pi_names)

    only_pi, only_ours = sorted(set(pi_names) - set(our_names)), sorted(set(our_names) - set(pi_names))
    assert sorted(our_names) == sorted(pi_names), f"only pi: {only_pi}; only pi-tui: {only_ours}"
    for server in SERVERS:
        ours_runs, pis_runs = server_runs(our_names, server), server_runs(pi_names, server)
        assert len(pis_runs) == 1 and len(ours_runs) == 1, (server, pis_runs, ours_runs)
        assert ours_runs == pis_runs, f"{server}: the tools come in another order"
    pi_tools, our_tools = mcp_declared(pis), mcp_declared(ours)
    differences = []
    for name in pi_names:
        (our_text, our_args), (pi_text, pi_args) = our_tools[name], pi_tools[name]
        if name in RESOURCE_TOOLS:  # the client's own tools: their prose is each program's
            our_args = canonical(without_descriptions(json.loads(our_args)))
            pi_args = canonical(without_descriptions(json.loads(pi_args)))
        elif our_text != pi_text:
            differences.append(f"{name}: description {our_text!r}, pi: {pi_text!r}")
        if our_args != pi_args:
            differences.append(f"{name}: parameters {our_args}, pi: {pi_args}")
    assert differences == []


@pytest.mark.xdist_group("mcp-direct-vs-pi")  # one worker runs the fixture
def test_direct_tool_results_are_saved_as_pi_saves_them(direct: Pair) -> None:
    pis, ours = tool_results(direct.pi.session), tool_results(direct.ours.session)
    # the reference: what pi 1.5.2 saved for the six calls
    assert [result["tool"] for result in pis] == [
        "mcp__everything__echo",
        "mcp__everything__get_sum",
        "mcp__everything__get_tiny_image",
        "mcp__filesystem__read_text_file",
        "mcp__filesystem__read_text_file",
        "mcp__everything_http__echo",
    ]
    assert pis[0]["content"] == [{"text": "Echo: same as pi"}]
    assert pis[1]["content"] == [{"text": "The sum of 2 and 3 is 5."}]
    assert [next(iter(block)) for block in pis[2]["content"]] == ["text", "image", "text"]
    assert pis[3]["content"] == [{"text": NOTES}] and not pis[3]["isError"]
    assert pis[4]["isError"] and "ENOENT" in pis[4]["content"][0]["text"]
    assert pis[5]["content"] == [{"text": "Echo: over http"}]

    assert len(ours) == len(pis), ours
    for mine, theirs in zip(ours, pis, strict=True):
        assert mine == theirs


@pytest.mark.xdist_group("mcp-direct-vs-pi")  # one worker runs the fixture
def test_direct_results_reach_the_model_as_in_pi(direct: Pair) -> None:
    """The second request carries the six results: the same tool messages in both."""
    pis, ours = direct.pi.requests[1], direct.ours.requests[1]

    def tool_messages(body: dict[str, Any]) -> list[Any]:
        return [message["content"] for message in body["messages"] if message["role"] == "tool"]

    assert tool_messages(ours) == tool_messages(pis)


@pytest.mark.xdist_group("mcp-deferred-vs-pi")  # one worker runs the fixture
def test_deferred_exposure_declares_tool_search_only(deferred: Pair) -> None:
    pis, ours = deferred.pi.requests[0], deferred.ours.requests[0]
    assert "tool_search" in names(pis) and not any(is_mcp(name) for name in names(pis))
    assert "tool_search" in names(ours), names(ours)
    assert [name for name in names(ours) if is_mcp(name)] == []
    # the same arguments (names, types, required); their descriptions are each program's prose
    search = {tool["name"]: tool for tool in declared(ours)}["tool_search"]
    pi_search = {tool["name"]: tool for tool in declared(pis)}["tool_search"]
    assert canonical(without_descriptions(search["parameters"])) == canonical(
        without_descriptions(pi_search["parameters"])
    )


@pytest.mark.xdist_group("mcp-deferred-vs-pi")  # one worker runs the fixture
def test_deferred_search_declares_the_match_for_the_next_call(deferred: Pair) -> None:
    for who, result in (("pi", deferred.pi), ("pi-tui", deferred.ours)):
        after = names(result.requests[1])
        assert "mcp__everything__echo" in after, f"{who} did not declare echo after tool_search: {after}"
    echo_pi = mcp_declared(deferred.pi.requests[1])["mcp__everything__echo"]
    echo_ours = mcp_declared(deferred.ours.requests[1])["mcp__everything__echo"]
    assert echo_ours == echo_pi
    pis = [r for r in tool_results(deferred.pi.session) if r["tool"] == "mcp__everything__echo"]
    ours = [r for r in tool_results(deferred.ours.session) if r["tool"] == "mcp__everything__echo"]
    assert pis == [
        {"tool": "mcp__everything__echo", "content": [{"text": "Echo: found it"}], "isError": False}
    ]
    assert ours == pis


def resources_script() -> list[Scripted]:
    calls = [
        ToolCallSpec("read_mcp_resource", {"server": "everything", "uri": FEATURES}),
        ToolCallSpec("list_mcp_resources", {"server": "everything"}),
        ToolCallSpec("list_mcp_resource_templates", {"server": "everything"}),
        ToolCallSpec("mcp__everything__trigger_long_running_operation", {"duration": 1, "steps": 3}),
        ToolCallSpec("mcp__everything__get_resource_links", {"count": 2}),
    ]
    return [Scripted(tool_calls=calls), Scripted(text="done")]


FEATURES = "demo://resource/static/document/features.md"


@pytest.fixture(scope="module")
def resources(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    yield run_both(tmp_path_factory.mktemp("mcp-resources"), "direct", resources_script())


def listed(result: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """The (server, uri or template) rows of a listing result's JSON text."""
    data = json.loads(result["content"][0]["text"])
    return sorted((row["server"], row.get("uri") or row.get("uriTemplate")) for row in data[key])


def test_resources_progress_and_links_answer_as_in_pi(resources: Pair) -> None:
    pis, ours = tool_results(resources.pi.session), tool_results(resources.ours.session)
    assert [r["tool"] for r in ours] == [r["tool"] for r in pis]
    assert not any(r["isError"] for r in pis), pis
    read_pi, read_ours = pis[0], ours[0]
    assert "features" in read_pi["content"][0]["text"].lower()
    assert read_ours == read_pi  # the resource's text, as pi gives it
    # the listings are each program's JSON layout: the same rows
    assert FEATURES in {uri for _server, uri in listed(pis[1], "resources")}
    assert listed(ours[1], "resources") == listed(pis[1], "resources")
    assert listed(ours[2], "resourceTemplates") == listed(pis[2], "resourceTemplates")
    assert ours[3] == pis[3]  # the long-running operation's result after its progress
    # resource links: each program words the line its own way; both name the link's uri, the
    # tool that reads it and the server
    links_pi, links_ours = pis[4]["content"], ours[4]["content"]
    assert len(links_ours) == len(links_pi) and links_ours[0] == links_pi[0]
    for mine, theirs in zip(links_ours[1:], links_pi[1:], strict=True):
        uri = theirs["text"].split()[1]
        assert uri.startswith("demo://") and uri in mine["text"]
        assert "read_mcp_resource" in mine["text"] and '"everything"' in mine["text"]
