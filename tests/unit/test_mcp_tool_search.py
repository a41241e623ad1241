"""tool_search: pi 1.5.2's BM25 ranking rules, the tool's checks and text, and branch loading.

The catalogue below mirrors tools of the reference MCP servers (server-everything and
server-filesystem) plus a few made to exercise one rule each. The expected rankings and scores
were produced by pi 1.5.2's own ranker (tool-search/tool.js) for the same tools and queries,
so they pin the tokenizer, the weights, k1/b and the ordering together.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_tui.mcp.tool_search import (
    SearchEntry,
    ToolSearchTool,
    loaded_on_branch,
    rank,
    tokenize,
)
from pi_tui.messages import TextContent, ToolResultMessage
from pi_tui.tools.base import ToolContext, ToolError

CATALOGUE = [
    SearchEntry(
        "mcp__everything__echo",
        "Echoes back the input",
        {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}},
            "required": ["message"],
        },
        "mcp__everything",
        "Reference server exercising all MCP features",
    ),
    SearchEntry(
        "mcp__everything__get_sum",
        "Returns the sum of two numbers",
        {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "First number"},
                "b": {"type": "number", "description": "Second number"},
            },
        },
        "mcp__everything",
        "Reference server exercising all MCP features",
    ),
    SearchEntry(
        "mcp__everything__get_tiny_image",
        "Returns a tiny MCP logo image.",
        {"type": "object", "properties": {}},
        "mcp__everything",
        None,
    ),
    SearchEntry(
        "mcp__everything__trigger_long_running_operation",
        "Demonstrates a long running operation with progress updates.",
        {
            "type": "object",
            "properties": {
                "duration": {"type": "number", "description": "Duration of the operation in seconds"},
                "steps": {"type": "number", "description": "Number of steps in the operation"},
            },
        },
        "mcp__everything",
        None,
    ),
    SearchEntry(
        "mcp__filesystem__read_text_file",
        "Read the complete contents of a file from the file system as text.\nHandles various text encodings.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "tail": {
                    "type": "number",
                    "description": "If provided, returns only the last N lines of the file",
                },
                "head": {
                    "type": "number",
                    "description": "If provided, returns only the first N lines of the file",
                },
            },
        },
        "mcp__filesystem",
        "Files of the project",
    ),
    SearchEntry(
        "mcp__filesystem__read_multiple_files",
        "Read the contents of multiple files simultaneously.",
        {
            "type": "object",
            "properties": {
                "paths": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Array of file paths to read",
                }
            },
        },
        "mcp__filesystem",
        "Files of the project",
    ),
    SearchEntry(
        "mcp__filesystem__write_file",
        "Create a new file or completely overwrite an existing file with new content.",
        {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        "mcp__filesystem",
        "Files of the project",
    ),
    SearchEntry(
        "mcp__filesystem__search_files",
        "Recursively search for files and directories matching a pattern.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "pattern": {"type": "string"},
                "excludePatterns": {"type": "array", "items": {"type": "string"}},
            },
        },
        "mcp__filesystem",
        "Files of the project",
    ),
    SearchEntry(
        "mcp__gh__list_issues",
        "List issues in a GitHub repository.",
        {
            "type": "object",
            "$defs": {"State": {"description": "Issue state filter: open closed", "type": "string"}},
            "properties": {
                "state": {"$ref": "#/$defs/State"},
                "repo": {"type": "string", "description": "owner/name"},
            },
        },
        "mcp__gh",
        "GitHub issues and pull requests",
    ),
    SearchEntry(
        "mcp__gh__getHTTPResponse",
        "Fetch a GitHub API URL",
        {
            "type": "object",
            "properties": {
                "url": {"anyOf": [{"type": "string", "description": "absolute URL"}, {"type": "null"}]}
            },
        },
        "mcp__gh",
        "GitHub issues and pull requests",
    ),
    SearchEntry(
        "mcp__peekaboo__app",
        "Launch, quit or focus an application window",
        {},
        "mcp__peekaboo",
        "macOS screenshots",
    ),
    SearchEntry(
        "mcp__peekaboo__window",
        "Move or resize a window",
        {},
        "mcp__peekaboo",
        None,
    ),
    SearchEntry(
        "mcp__peekaboo__see",
        "Take a screenshot of a window and describe it",
        {},
        "mcp__peekaboo",
        None,
    ),
    SearchEntry(
        "other_tool",
        "Echoes back the input too",
        {},
        None,
        None,
    ),
]

PI_RANKINGS = {
    "sum numbers": [
        ("mcp__everything__get_sum", 12.108747888159433),
        ("mcp__everything__trigger_long_running_operation", 1.5009127417581702),
    ],
    "read file": [
        ("mcp__filesystem__read_multiple_files", 13.648230517300043),
        ("mcp__filesystem__read_text_file", 12.024292648265334),
        ("mcp__filesystem__write_file", 5.798977672489568),
        ("mcp__filesystem__search_files", 5.392501143497313),
    ],
    "screenshot window": [
        ("mcp__peekaboo__see", 4.25475085068021),
        ("mcp__peekaboo__app", 2.7009541062153923),
        ("mcp__peekaboo__window", 9.633872064870241),
    ],
    "peekaboo app": [
        ("mcp__peekaboo__app", 15.759132918706973),
        ("mcp__peekaboo__window", 5.093505314123947),
        ("mcp__peekaboo__see", 5.093505314123947),
    ],
    "issue state": [
        ("mcp__gh__list_issues", 11.239042110393514),
        ("mcp__gh__getHTTPResponse", 0.8958797346140275),
    ],
    "HTTPResponse": [("mcp__gh__getHTTPResponse", 13.815510557964275)],
    "excludePatterns": [("mcp__filesystem__search_files", 5.832047534319771)],
    "searches": [("mcp__filesystem__search_files", 9.161808133482165)],
    "mcp-everything": [
        ("mcp__everything__get_tiny_image", 4.713351176456437),
        ("mcp__everything__echo", 4.5826666199431685),
        ("mcp__everything__get_sum", 4.5826666199431685),
        ("mcp__everything__trigger_long_running_operation", 4.5826666199431685),
        ("mcp__filesystem__read_text_file", 0.36876180480239223),
        ("mcp__filesystem__read_multiple_files", 0.36876180480239223),
        ("mcp__filesystem__write_file", 0.36876180480239223),
        ("mcp__filesystem__search_files", 0.36876180480239223),
    ],
    "Files of the project": [
        ("mcp__filesystem__read_multiple_files", 6.447206070490912),
        ("mcp__filesystem__write_file", 6.400964074652536),
        ("mcp__filesystem__read_text_file", 6.299341864933049),
        ("mcp__filesystem__search_files", 5.994487545660281),
    ],
    "echo input": [("mcp__everything__echo", 15.823046396158713), ("other_tool", 2.3478227527815894)],
    "filesystem__read_text_file": [
        ("mcp__filesystem__read_text_file", 31.618520433981793),
        ("mcp__filesystem__read_multiple_files", 17.86213533244082),
        ("mcp__filesystem__write_file", 10.012882487630344),
        ("mcp__filesystem__search_files", 9.606405958638089),
    ],
}


def names(query: str, entries: list[SearchEntry] = CATALOGUE, limit: int = 8) -> list[str]:
    return [name for name, _score in rank(query, entries, limit)]


@pytest.mark.parametrize("query", sorted(PI_RANKINGS))
def test_rankings_and_scores_are_pis(query: str) -> None:
    expected = PI_RANKINGS[query]
    got = rank(query, CATALOGUE, 8)
    assert [name for name, _ in got] == [name for name, _ in expected]
    assert [score for _, score in got] == pytest.approx([score for _, score in expected], rel=1e-12)


def test_tokenizer_splits_identifiers_drops_stop_words_and_stems() -> None:
    assert tokenize("getHTTPResponse readFile") == ["get", "http", "response", "read", "file"]
    assert tokenize("ABCDef") == ["abc", "def"]
    assert tokenize("dev-radius_tool") == ["dev", "radiu", "tool"]
    assert tokenize("The issues of a policy") == ["issue", "policy"]
    assert tokenize("boxes classes glass bus ties searches wishes buzzes policies") == [
        "box",
        "class",
        "glass",
        "bus",
        "tie",
        "search",
        "wish",
        "buzz",
        "policy",
    ]


def test_tokenizer_keeps_other_letters_without_stemming() -> None:
    assert tokenize("Cafés naïve") == ["cafés", "naïve"]
    # Han characters are words of their own (pi's ICU segmenter uses a dictionary instead).
    assert tokenize("搜索 docs") == ["搜", "索", "doc"]


def test_name_match_beats_many_description_mentions() -> None:
    entries = [
        SearchEntry("mcp__s__notes", "archive archive archive archive archive archive"),
        SearchEntry("mcp__s__archive", "stores notes"),
    ]
    assert names("archive", entries) == ["mcp__s__archive", "mcp__s__notes"]


def test_namespace_description_finds_a_servers_tools_at_half_weight() -> None:
    entries = [
        SearchEntry("mcp__a__alpha", "nothing relevant", {}, "mcp__a", "weather forecasts"),
        SearchEntry("mcp__b__beta", "nothing relevant either"),
    ]
    [(name, score)] = rank("weather", entries, 5)
    assert name == "mcp__a__alpha"
    assert score == pytest.approx(0.34657359027997264, rel=1e-12)  # ln 2 * 0.5


def test_namespace_is_ignored_without_a_namespace_name() -> None:
    entries = [SearchEntry("t", "nothing", {}, None, "weather forecasts"), SearchEntry("u", "other")]
    assert names("weather", entries) == []


def test_coverage_ranks_before_score() -> None:
    # see mentions both words; window has one in its name and scores more.
    assert PI_RANKINGS["screenshot window"][2][1] > PI_RANKINGS["screenshot window"][0][1]
    assert names("screenshot window") == ["mcp__peekaboo__see", "mcp__peekaboo__app", "mcp__peekaboo__window"]


def test_a_query_naming_a_tool_exactly_puts_it_first() -> None:
    entries = [
        SearchEntry("mcp__y__get_all", "get get get everything; get it all"),
        SearchEntry("mcp__x__get", "Fetch one thing"),
    ]
    got = rank("get", entries, 5)
    assert [name for name, _ in got] == ["mcp__x__get", "mcp__y__get_all"]
    assert got[0][1] < got[1][1]
    assert names("x__get", entries) == ["mcp__x__get", "mcp__y__get_all"]
    assert names("MCP__X__GET ", entries) == ["mcp__x__get", "mcp__y__get_all"]


def test_whole_local_name_in_query_earns_the_bonus() -> None:
    [(app, app_score), (_window, window_score), _see] = rank("peekaboo app", CATALOGUE, 8)
    assert app == "mcp__peekaboo__app"
    assert app_score > 3 * window_score


def test_schema_descriptions_property_names_and_refs_are_searched() -> None:
    assert names("excludePatterns") == ["mcp__filesystem__search_files"]
    # "state filter" is only in the $defs entry the state property references.
    assert names("filter") == ["mcp__gh__list_issues"]
    assert names("absolute") == ["mcp__gh__getHTTPResponse"]  # inside anyOf
    unreferenced = SearchEntry(
        "t", "x", {"$defs": {"Unused": {"description": "hidden words"}}, "properties": {}}
    )
    assert names("hidden", [unreferenced]) == []
    recursive = SearchEntry(
        "r",
        "tree",
        {
            "$defs": {
                "Node": {"description": "branch node", "properties": {"kids": {"$ref": "#/$defs/Node"}}}
            },
            "$ref": "#/$defs/Node",
        },
    )
    assert names("branch", [recursive]) == ["r"]


def test_ties_keep_catalogue_order() -> None:
    tied = [
        "mcp__everything__echo",
        "mcp__everything__get_sum",
        "mcp__everything__trigger_long_running_operation",
    ]
    assert names("mcp-everything")[1:4] == tied
    assert names("mcp-everything", list(reversed(CATALOGUE)))[1:4] == list(reversed(tied))


def test_limit_and_empty_queries() -> None:
    assert len(names("mcp-everything", limit=2)) == 2
    assert names("the of a") == []
    assert names("") == []
    assert names("read", [], 8) == []
    assert names("read", CATALOGUE, 0) == []


def run(tool: ToolSearchTool, args: dict) -> object:
    return asyncio.run(tool.execute("call-1", args, ToolContext(cwd=Path("."))))


def test_tool_declares_matches_with_first_description_lines() -> None:
    tool = ToolSearchTool(lambda: list(CATALOGUE))
    assert tool.name == "tool_search"
    assert tool.parameters["required"] == ["query"]
    assert set(tool.parameters["properties"]) == {"query", "limit"}
    result = run(tool, {"query": "read file", "limit": 2})
    assert result.details == {
        "loaded": ["mcp__filesystem__read_multiple_files", "mcp__filesystem__read_text_file"]
    }
    assert result.is_error is False
    [block] = result.content
    lines = block.text.split("\n")
    assert lines[1:] == [
        "- mcp__filesystem__read_multiple_files: Read the contents of multiple files simultaneously.",
        "- mcp__filesystem__read_text_file: Read the complete contents of a file from the file system"
        " as text.",
    ]
    assert "2" in lines[0]


def test_default_limit_is_eight() -> None:
    entries = [SearchEntry(f"mcp__s__tool{index}", "shared word") for index in range(12)]
    result = run(ToolSearchTool(lambda: entries), {"query": "shared"})
    assert len(result.details["loaded"]) == 8
    assert run(ToolSearchTool(lambda: entries), {"query": "shared", "limit": 3.0}).details["loaded"] == [
        "mcp__s__tool0",
        "mcp__s__tool1",
        "mcp__s__tool2",
    ]


def test_no_match_says_so_and_loads_nothing() -> None:
    result = run(ToolSearchTool(lambda: list(CATALOGUE)), {"query": "zebra"})
    assert result.details == {"loaded": []}
    assert "- " not in result.content[0].text
    assert result.content[0].text


@pytest.mark.parametrize("args", [{"query": ""}, {"query": "   "}, {}, {"query": 3}])
def test_empty_query_is_an_error(args: dict) -> None:
    with pytest.raises(ToolError, match="query"):
        run(ToolSearchTool(lambda: list(CATALOGUE)), args)


@pytest.mark.parametrize("limit", [0, -1, 2.5, "3", True])
def test_bad_limit_is_an_error(limit: object) -> None:
    with pytest.raises(ToolError, match="limit"):
        run(ToolSearchTool(lambda: list(CATALOGUE)), {"query": "read", "limit": limit})


def test_waits_for_servers_before_reading_the_catalogue() -> None:
    entries: list[SearchEntry] = []

    async def ready() -> None:
        await asyncio.sleep(0)
        entries.append(SearchEntry("mcp__late__weather", "Forecast the weather"))

    result = run(ToolSearchTool(lambda: list(entries), ready), {"query": "weather"})
    assert result.details == {"loaded": ["mcp__late__weather"]}


def result_message(tool: str, loaded: object, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id="c",
        tool_name=tool,
        content=[TextContent(text="x")],
        details={"loaded": loaded},
        is_error=is_error,
    )


def test_loaded_on_branch_collects_successful_searches() -> None:
    messages = [
        result_message("tool_search", ["mcp__a__one", "mcp__a__two"]),
        result_message("tool_search", ["mcp__b__three"]),
        result_message("tool_search", ["mcp__c__failed"], is_error=True),
        result_message("read", ["mcp__d__other_tool"]),
        result_message("tool_search", "not a list"),
        result_message("tool_search", [1, "mcp__e__ok"]),
        ToolResultMessage(tool_call_id="c", tool_name="tool_search", details=None),
        {"role": "toolResult", "toolName": "tool_search", "details": {"loaded": ["mcp__f__from_file"]}},
        {
            "role": "toolResult",
            "toolName": "tool_search",
            "isError": True,
            "details": {"loaded": ["mcp__g__no"]},
        },
        {"role": "user", "content": "hi"},
    ]
    assert loaded_on_branch(messages) == {
        "mcp__a__one",
        "mcp__a__two",
        "mcp__b__three",
        "mcp__e__ok",
        "mcp__f__from_file",
    }
    assert loaded_on_branch([]) == set()
