import pytest

from dedup import services
from palace.models import DrawerLink


@pytest.fixture
def as_curator(client, curator):
    """The test client, logged in as a curator."""
    client.force_login(curator)
    return client


@pytest.fixture
def other_curator(django_user_model, curator):
    user = django_user_model.objects.create_user("otto", password="secret-pass-1")
    user.groups.add(*curator.groups.all())
    return user


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("vic", password="secret-pass-1")


BASE = "For local development always use port 8080 for the API server."


@pytest.fixture
def drawer_link(dedup_settings):
    """A near-miss pair: port 8080 and port 8081."""
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content=BASE)
    (link,) = services.drawer_write(room=room, content=BASE.replace("8080", "8081")).links
    return link


@pytest.fixture
def entity_link(dedup_settings):
    services.entity_resolve(name="Katarina", kind="person")
    result = services.entity_resolve(name="Katerino", kind="person")
    (link,) = result.possible
    return link


REPORT = "The quarterly report for the north region is due on the first Monday"


@pytest.fixture
def triangle(dedup_settings):
    """Three drawers linked pairwise: report ~ report!, report ~ report?, report! ~ report?."""
    room = services.room_get_or_create(wing="w", room="r")
    for end in ("", "!", "?"):
        services.drawer_write(room=room, content=f"{REPORT}{end}")
    return list(DrawerLink.objects.order_by("pk"))
