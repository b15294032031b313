"""The refusals every operation can meet, whatever its view declares, are in the schema, each with
the error body (`api.schema`), and are what the app answers: a key without the method's right
(403), a write over the rate (429), a write's body sent chunked (411) or not JSON (415). The
schema listed none of 411, 415 and 429, and no 403 on `DELETE /api/drawers/{id}` or any read; a
schemathesis run failed on an undocumented 429 from `/api/sweeps/1/cancel`."""

from __future__ import annotations

import re
import uuid

import pytest
from django.core.cache import cache
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from api.models import ALL_WINGS, AgentKey
from tests.api.conftest import api_client
from tests.conftest import person_client

pytestmark = pytest.mark.django_db

WRITES = {"post", "put", "patch", "delete"}
# Any well-formed value: each refusal here comes before a view looks anything up.
PATH_VALUES = {
    "drawer_id": str(uuid.uuid4()),
    "entity_id": str(uuid.uuid4()),
    "batch_id": str(uuid.uuid4()),
    "item_id": "d1",
    "decision_id": "1",
    "run_id": "1",
    "import_id": "1",
    "wing": "ops",
    "room": "dev",
}


def api_operations() -> list[tuple[str, str, dict]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        if path.startswith("/api/") and not path.startswith("/api/schema")
        for method, operation in item.items()
    ]


OPERATIONS = api_operations()
WRITE_OPERATIONS = [operation for operation in OPERATIONS if operation[1] in WRITES]


def label(operation: tuple[str, str, dict]) -> str:
    return f"{operation[1].upper()} {operation[0]}"


def url(path: str) -> str:
    return re.sub(r"{(\w+)}", lambda name: PATH_VALUES[name[1]], path)


def key_client(rights: list[str]) -> APIClient:
    _, secret = AgentKey.objects.issue(agent="scout", wings=[ALL_WINGS], rights=rights)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def documented(operation: tuple[str, str, dict], status: int) -> None:
    responses = operation[2]["responses"]
    assert str(status) in responses, f"{label(operation)} does not document {status}"
    schema = responses[str(status)]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/Error"}


@pytest.mark.parametrize("operation", OPERATIONS, ids=label)
def test_a_key_without_the_method_s_right_is_a_documented_403(dedup_settings, operation):
    path, method, _ = operation
    client = key_client(["read"] if method in WRITES else ["write"])
    response = getattr(client, method)(url(path), format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    documented(operation, 403)


@pytest.fixture
def one_write_a_minute(settings):
    cache.clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"writes": "1/min"},
    }
    yield
    cache.clear()


@pytest.mark.parametrize("operation", WRITE_OPERATIONS, ids=label)
def test_a_write_over_the_rate_is_a_documented_429(
    dedup_settings, one_write_a_minute, curator, operation
):
    path, method, _ = operation
    client = person_client(curator)  # a curator may use every route
    getattr(client, method)(url(path), format="json")  # the minute's one write, whatever it was
    response = getattr(client, method)(url(path), format="json")
    assert response.status_code == 429
    assert response.json()["code"] == "throttled"
    documented(operation, 429)


@pytest.mark.parametrize("operation", WRITE_OPERATIONS, ids=label)
def test_a_write_s_body_sent_chunked_is_a_documented_411(dedup_settings, curator, operation):
    path, method, _ = operation
    client = person_client(curator)
    response = getattr(client, method)(  # no Content-Length: the body was sent chunked
        url(path), "", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"
    )
    assert response.status_code == 411
    assert response.json()["code"] == "unsupported_request"
    documented(operation, 411)


@pytest.mark.parametrize("operation", WRITE_OPERATIONS, ids=label)
def test_every_write_documents_a_body_that_is_not_json(operation):
    documented(operation, 415)


@pytest.mark.parametrize(
    ("method", "path"),
    [("delete", "/api/drawers/{drawer}"), ("post", "/api/sweeps/{run}/cancel")],
)
def test_a_write_s_body_that_is_not_json_is_415(world, method, path):
    response = getattr(api_client(world), method)(
        path.format(**world), "drawer=1", content_type="text/plain"
    )
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
