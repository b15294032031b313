"""What the API's bad-input tests share: a world with one of each thing a URL can name, a
client with its curator's key, and the rows of every table."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.test import Client
from rest_framework.authtoken.models import Token

from dedup import services as write
from review import services as review_services
from review.services import sweeps as sweep_services

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
