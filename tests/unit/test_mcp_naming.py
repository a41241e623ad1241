"""MCP tool names and schemas as pi 1.5.2 makes them (pi-mcp's naming.js and input-schema.js).

The expected names were worked out by hand from pi's rule (sanitise, then cut to 55 characters
and add ``_`` + 8 hex digits of sha256("server\\0tool") when too long or taken) and checked
against pi 1.5.2's own function.
"""

from __future__ import annotations

import hashlib

from pi_tui.mcp.naming import (
    namespace,
    normalize_input_schema,
    same_server_name,
    server_tool_names,
    tool_name,
)


def test_plain_name_keeps_letters_digits_and_underscores() -> None:
    assert tool_name("files", "read_file2") == "mcp__files__read_file2"


def test_every_other_character_becomes_an_underscore() -> None:
    assert tool_name("my-server", "get.thing/é") == "mcp__my_server__get_thing__"


def test_a_character_beyond_the_bmp_is_two_underscores_as_in_pi() -> None:
    assert tool_name("s", "smile😀x") == "mcp__s__smile__x"


def test_collision_after_sanitising_gets_the_hash_suffix() -> None:
    # a-b sanitises to the name a_b already holds.
    def taken(name: str) -> bool:
        return name == "mcp__srv__a_b"

    assert tool_name("srv", "a-b", taken) == "mcp__srv__a_b_3d325570"
    assert tool_name("srv", "a_b", taken) == "mcp__srv__a_b_5c15ffbd"
    assert tool_name("srv", "a-b") == "mcp__srv__a_b"
    suffix = hashlib.sha256(b"srv\0a-b").hexdigest()[:8]
    assert suffix == "3d325570"


def test_name_of_64_characters_is_kept_and_65_is_cut() -> None:
    fits = tool_name("s", "t" * 56)
    assert fits == "mcp__s__" + "t" * 56
    assert len(fits) == 64
    cut = tool_name("s", "t" * 57)
    digest = hashlib.sha256(("s\0" + "t" * 57).encode()).hexdigest()[:8]
    assert cut == ("mcp__s__" + "t" * 57)[:55] + "_" + digest
    assert len(cut) == 64


def test_seventy_character_tool_is_cut_with_its_hash() -> None:
    assert tool_name("files", "x" * 70) == "mcp__files__" + "x" * 43 + "_b8620688"


def test_emoji_name_cut_counts_the_doubled_underscores() -> None:
    assert tool_name("s", "😀" * 30) == "mcp__s__" + "_" * 47 + "_af4975cf"


def test_namespace_maps_dashes() -> None:
    assert namespace("dev-radius") == "mcp__dev_radius"
    assert namespace("dev_radius") == "mcp__dev_radius"
    assert namespace("Docs2") == "mcp__Docs2"


def test_same_server_name_only_for_dash_underscore_differences() -> None:
    assert same_server_name("dev-radius", "dev_radius")
    assert same_server_name("a-b_c", "a_b-c")
    assert not same_server_name("dev-radius", "devradius")
    assert not same_server_name("Dev", "dev")


def test_schema_without_type_or_properties_becomes_an_object_schema() -> None:
    assert normalize_input_schema({}) == {"type": "object", "properties": {}}
    assert normalize_input_schema({"type": None, "required": []}) == {
        "type": "object",
        "properties": {},
        "required": [],
    }


def test_schema_keywords_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "$defs": {"X": {"type": "number"}},
        "additionalProperties": False,
    }
    assert normalize_input_schema(schema) == schema
    # A type the server gave is not replaced; the input is not changed in place.
    odd = {"type": "array", "items": {}}
    assert normalize_input_schema(odd) == {"type": "array", "items": {}, "properties": {}}
    assert odd == {"type": "array", "items": {}}


def test_server_tool_names_give_every_colliding_tool_the_suffix() -> None:
    assert server_tool_names("srv", ["a-b", "c", "a_b"]) == {
        "a-b": "mcp__srv__a_b_3d325570",
        "c": "mcp__srv__c",
        "a_b": "mcp__srv__a_b_5c15ffbd",
    }
    # The order of the list does not decide who keeps the plain name.
    assert server_tool_names("srv", ["a_b", "a-b"]) == {
        "a_b": "mcp__srv__a_b_5c15ffbd",
        "a-b": "mcp__srv__a_b_3d325570",
    }


def test_server_tool_names_respect_names_held_elsewhere() -> None:
    names = server_tool_names("srv", ["x", "y"], lambda name: name == "mcp__srv__y")
    assert names["x"] == "mcp__srv__x"
    assert names["y"] == "mcp__srv__y_" + hashlib.sha256(b"srv\0y").hexdigest()[:8]
