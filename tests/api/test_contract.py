"""The OpenAPI schema is the contract: every error a view can answer is documented with the
error body, `code` is an enum of the one list of stable codes, and the README's table lists
exactly those codes. `make fuzz` holds the live app to the same schema."""

import re
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from api.error_codes import ERROR_CODES

ROOT = Path(__file__).resolve().parents[2]
ERROR_REF = "#/components/schemas/Error"
PAGINATED = [
    ("/api/wings/{wing}/rooms/{room}/drawers", "get"),
    ("/api/entities", "get"),
    ("/api/entities/{entity_id}/mentions", "get"),
    ("/api/review/decisions", "get"),
    ("/api/sweeps/{run_id}/proposals", "get"),
]


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def error_schema_of(response):
    return response["content"]["application/json"]["schema"]["$ref"]


def test_error_code_is_an_enum_of_the_stable_codes(schema):
    code = schema["components"]["schemas"]["Error"]["properties"]["code"]
    enum = schema["components"]["schemas"][code["allOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert sorted(enum) == sorted(ERROR_CODES)


def readme_error_table():
    rows = {}
    text = (ROOT / "README.md").read_text()
    for match in re.finditer(r"^\| `([a-z_]+)` \| ([\d, ]+) \| (.+) \|$", text, re.MULTILINE):
        rows[match[1]] = tuple(int(status) for status in match[2].split(","))
    return rows


def test_the_readme_table_lists_every_code_with_its_statuses():
    assert readme_error_table() == {code: spec.statuses for code, spec in ERROR_CODES.items()}


def test_the_readme_table_is_sorted_by_code():
    codes = list(readme_error_table())
    assert codes == sorted(codes)


@pytest.mark.parametrize("status", ["400", "401", "503"])
def test_every_operation_documents_the_errors_any_request_can_meet(schema, status):
    undocumented = [
        f"{method.upper()} {path}"
        for path, method, operation in operations(schema)
        if path.startswith("/api/")
        and not path.startswith("/api/schema")
        and status not in operation["responses"]
    ]
    assert undocumented == []


def test_every_error_response_has_the_error_body(schema):
    wrong = [
        f"{method.upper()} {path} {status}"
        for path, method, operation in operations(schema)
        for status, response in operation["responses"].items()
        if status.startswith(("4", "5")) and error_schema_of(response) != ERROR_REF
    ]
    assert wrong == []


@pytest.mark.parametrize(("path", "method"), PAGINATED)
def test_a_paginated_list_documents_the_404_of_an_unknown_cursor(schema, path, method):
    assert "404" in schema["paths"][path][method]["responses"]


def test_every_path_with_a_parameter_documents_404(schema):
    undocumented = [
        f"{method.upper()} {path}"
        for path, method, operation in operations(schema)
        if "{" in path and "404" not in operation["responses"]
    ]
    assert undocumented == []


@pytest.mark.parametrize("name", ["drawer_id", "entity_id"])
def test_path_ids_are_uuids(schema, name):
    formats = {
        parameter["schema"].get("format")
        for _, _, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["name"] == name and parameter["in"] == "path"
    }
    assert formats == {"uuid"}


@pytest.mark.parametrize(
    ("component", "field"),
    [("Drawer", "superseded_by"), ("Entity", "redirect_to"), ("Sweep", "finished_at")],
)
def test_fields_that_can_be_null_are_nullable(schema, component, field):
    assert schema["components"]["schemas"][component]["properties"][field]["nullable"] is True


def test_redirect_kind_may_be_empty(schema):
    redirect_kind = schema["components"]["schemas"]["Entity"]["properties"]["redirect_kind"]
    variants = [
        schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]
        for ref in redirect_kind["oneOf"]
        if "$ref" in ref
    ]
    assert "" in {value for variant in variants for value in variant["enum"]}


@pytest.mark.parametrize(
    ("component", "field", "limit"),
    [
        ("DrawerWriteRequest", "name", 200),
        ("DrawerWriteRequest", "agent", 150),
        ("DrawerWriteRequest", "kind", 32),
        ("MentionWriteRequest", "name", 200),
        ("AliasAddRequest", "alias", 200),
        ("CheckpointRequest", "id", 200),
        ("DiaryWriteRequest", "wing", 100),
    ],
)
def test_length_limits_are_declared(schema, component, field, limit):
    assert schema["components"]["schemas"][component]["properties"][field]["maxLength"] == limit


@pytest.mark.parametrize(
    ("component", "field"),
    [("Sweep", "summary"), ("Stats", "tiers"), ("Queue", "items")],
)
def test_sweep_stats_and_queue_responses_are_typed(schema, component, field):
    prop = schema["components"]["schemas"][component]["properties"][field]
    assert prop.get("type") != "object" or prop.get("properties")
    assert prop != {}
