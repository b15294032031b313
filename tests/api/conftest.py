"""What the API's tests share: a world with one of each thing a URL can name, a client with its
curator's key, and the rows of every table (the bad-input tests); a key of every wing and right,
as a secret, an MCP context or an HTTP Authorization header, and a REST client for a key's
secret (the MCP tests, and those comparing MCP with REST); an import's data in Castellan's own
format."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from api.models import ALL_WINGS, RIGHTS, AgentKey
from dedup import services as write
from review import services as review_services
from review.services import sweeps as sweep_services
from tests.api.mcp_support import ctx_of

BASE = "For local development always use port 8080 for the API server."


@pytest.fixture
def world(dedup_settings, django_user_model) -> dict:
    """A curator allowed everything, and one of each thing a URL can name."""
    user = django_user_model.objects.create_user("cora", password="secret-pass-1")
    group, _ = Group.objects.get_or_create(name="curators")
    group.permissions.add(Permission.objects.get(codename="decide"))
    user.groups.add(group)
    user.user_permissions.add(Permission.objects.get(codename="write_as_any_agent"))
    room = write.room_get_or_create(wing="ops", room="dev")
    drawer = write.drawer_write(room=room, content=BASE).drawer
    (decided,) = write.drawer_write(room=room, content=BASE.replace("8080", "8081")).links
    (open_link,) = write.drawer_write(room=room, content=BASE.replace("8080", "8082")).links[:1]
    entity = write.entity_resolve(name="Katarina", kind="person").entity
    decision = review_services.decide(item=f"d{decided.pk}", action="dismiss", actor=user)
    run = sweep_services.execute(sweep_services.start(wing="ops", threshold=0.9, actor=user))
    return {
        "user": user,
        "drawer": drawer.uuid,
        "entity": entity.uuid,
        "item": f"d{open_link.pk}",
        "decision": decision.pk,
        "run": run.pk,
    }


def row_counts() -> dict[str, int]:
    """Rows in every table of the palace and the review console."""
    models = [
        *apps.get_app_config("palace").get_models(),
        *apps.get_app_config("review").get_models(),
    ]
    return {model._meta.label: model.objects.count() for model in models}


def api_client(world) -> Client:
    token = Token.objects.get_or_create(user=world["user"])[0]
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}", raise_request_exception=False)


@pytest.fixture
def secret(dedup_settings) -> str:
    """The secret of agent-a's key of every wing, with every right."""
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=(ALL_WINGS,), rights=RIGHTS)
    return secret


@pytest.fixture
def ctx(secret) -> Any:
    """An MCP tool's context holding agent-a's key of every wing, with every right."""
    return ctx_of(secret)


@pytest.fixture
def bearer(settings) -> str:
    """The Authorization header of agent-a's key of every wing, with every right, for a request
    to the MCP app at 127.0.0.1 (the key is read on a worker thread: its test must commit it)."""
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    _, secret = AgentKey.objects.issue(agent="agent-a", wings=(ALL_WINGS,), rights=RIGHTS)
    return f"Bearer {secret}"


def rest_of(secret: str) -> APIClient:
    """A REST client sending a key's secret as MCP's clients do, as a bearer token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def castellan(*lines: dict) -> dict:
    """An import's body: the lines, in Castellan's own format."""
    return {"format": "castellan", "data": "\n".join(json.dumps(line) for line in lines)}
