"""Imports over the API (a background task; the tests' backend runs it at once), reversal,
the streamed export, and the scopes they need."""

import json
from pathlib import Path

import pytest

from dedup import services
from palace.models import Drawer, Import
from tests.conftest import agent_client

FIXTURES = Path(__file__).parents[1] / "dedup" / "imports" / "fixtures"
pytestmark = pytest.mark.django_db


def mem0_body(**extra) -> dict:
    return {"format": "mem0", "data": (FIXTURES / "mem0.json").read_text(), **extra}


def test_an_import_is_queued_and_reports_its_result(api):
    response = api.post("/api/imports", mem0_body(), format="json")
    assert response.status_code == 202
    detail = api.get(f"/api/imports/{response.json()['id']}").json()
    assert detail["status"] == "done"
    assert detail["summary"] == {
        "files": 1,
        "records": 4,
        "created": 3,
        "exact": 1,
        "similar": 0,
        "malformed": 3,
    }
    assert [m["line"] for m in detail["malformed"]] == [5, 6, 7]
    assert len(detail["drawers"]) == 3
    assert Import.objects.get(pk=detail["id"]).upload == ""


def test_the_same_import_again_stores_nothing(api):
    api.post("/api/imports", mem0_body(), format="json")
    again = api.post("/api/imports", mem0_body(), format="json").json()
    assert api.get(f"/api/imports/{again['id']}").json()["summary"]["created"] == 0
    assert Drawer.objects.count() == 3


def test_reverse_over_the_api(api):
    created = api.post("/api/imports", mem0_body(), format="json").json()
    response = api.post(f"/api/imports/{created['id']}/reverse")
    assert response.status_code == 200
    assert response.json()["status"] == "reversed"
    assert Drawer.objects.count() == 0
    again = api.post(f"/api/imports/{created['id']}/reverse")
    assert again.status_code == 409
    assert again.json()["code"] == "import_reversed"


def test_an_unknown_import_is_404(api):
    response = api.get("/api/imports/999")
    assert response.status_code == 404
    assert response.json()["code"] == "import_not_found"


def test_a_bad_format_is_refused_and_writes_nothing(api):
    response = api.post("/api/imports", {"format": "csv", "data": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert Import.objects.count() == 0


def test_a_key_must_reach_every_wing_the_records_name(user, dedup_settings):
    client = agent_client(user.username, wings=["alice"])
    response = client.post("/api/imports", mem0_body(), format="json")  # alice and builder
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"
    assert Import.objects.count() == 0
    assert Drawer.objects.count() == 0
    assert client.post("/api/imports", mem0_body(wing="alice"), format="json").status_code == 202


def test_a_key_without_delete_cannot_reverse(user, dedup_settings, api):
    created = api.post("/api/imports", mem0_body(), format="json").json()
    writer = agent_client(user.username, rights=["read", "write"])
    assert writer.post(f"/api/imports/{created['id']}/reverse").status_code == 403
    assert Drawer.objects.count() == 3


def test_export_streams_json_lines(api):
    services.drawer_write_in(wing="ops", room="db", content="Port 5433.")
    services.drawer_write_in(wing="home", room="garden", content="Roses.")
    response = api.get("/api/export?wing=ops&format=jsonl")
    assert response.status_code == 200
    assert response.streaming
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [line["content"] for line in lines] == ["Port 5433."]


def test_export_of_every_wing_needs_a_key_reaching_every_wing(user, dedup_settings):
    services.room_get_or_create(wing="ops", room="dev")
    client = agent_client(user.username, wings=["ops"])
    response = client.get("/api/export")
    assert response.status_code == 403
    assert response.json()["code"] == "out_of_scope"
    assert client.get("/api/export?wing=home").status_code == 404
    assert client.get("/api/export?wing=ops&format=mempalace").status_code == 200


def test_export_refuses_an_unknown_format(api):
    response = api.get("/api/export?format=xml")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_export_of_a_wing_that_does_not_exist_is_a_404(api):
    response = api.get("/api/export?wing=nosuch")
    assert response.status_code == 404
    assert response.json()["code"] == "wing_not_found"


def test_an_uploaded_line_is_held_to_a_body_s_rules(api):
    """A REST body refuses NaN anywhere and a number for `content`; an import stored both (the
    attack trial)."""
    lines = [
        '{"id": "a", "content": "Kept apart.", "wing": "w", "x": NaN}',
        '{"id": "b", "content": 5, "wing": "w"}',
    ]
    body = {"format": "jsonl", "data": "\n".join(lines)}
    detail = api.get(f"/api/imports/{api.post('/api/imports', body, format='json').json()['id']}")
    assert [m["error"] for m in detail.json()["malformed"]] == [
        "not JSON: Out of range float values are not JSON compliant: 'NaN'",
        "content must be a string",
    ]
    assert not Drawer.objects.exists()


def test_an_import_keeps_its_first_hundred_malformed_records_and_counts_them_all(api):
    """A file of a million bad lines had stored, and answered on every poll, a list of a million
    (100 MB): the first 100 are kept, in file order; the summary counts every one."""
    body = {
        "format": "jsonl",
        "data": "x\n" * 150 + '{"id": "g", "content": "A good line."}\n',
        "wing": "w",
    }
    response = api.post("/api/imports", body, format="json")
    detail = api.get(f"/api/imports/{response.json()['id']}").json()
    assert detail["summary"]["malformed"] == 150
    assert [m["line"] for m in detail["malformed"]] == list(range(1, 101))
    assert detail["summary"]["created"] == 1
