"""The admin against values it lets through to its queries or its services: lookups a query
string names, selections an action's form names, names the write path refuses. Each is a
message or a form error and changes nothing; none answers 500."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from dedup import services
from palace.models import AuditEntry, Drawer, DrawerLink, Room, Wing

pytestmark = pytest.mark.django_db
TEXT = "For local development always use port 8080 for the API server."


@pytest.fixture
def staff(admin_user, dedup_settings) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


@pytest.fixture
def linked(dedup_settings) -> DrawerLink:
    room = services.room_get_or_create(wing="ops", room="dev")
    services.drawer_write(room=room, content=TEXT)
    (link,) = services.drawer_write(room=room, content=TEXT.replace("8080", "8081")).links
    return link


LOOKUPS = {
    "a year past 9999": "/admin/palace/drawer/?created_at__year=9999&created_at__month=12",
    "a year of 20 digits": "/admin/palace/auditentry/?created_at__year=99999999999999999999",
    "a range of one value": "/admin/palace/wing/?name__range=abc",
    "an id SQLite cannot bind": "/admin/palace/drawer/?room__exact=99999999999999999999",
    "a regex that does not compile": "/admin/palace/drawer/?content__regex=(",
}


@pytest.mark.django_db(transaction=True)  # as served: PostgreSQL's refusal ends no transaction
@pytest.mark.parametrize("url", LOOKUPS.values(), ids=LOOKUPS.keys())
def test_a_changelist_lookup_that_fails_is_a_message(staff, linked, url):
    response = staff.get(url)
    if response.status_code == 200:  # PostgreSQL: Django reads a key past a bigint as no row
        assert connection.vendor == "postgresql"
        assert "room__exact" in url
        return
    assert response.status_code == 302
    assert response["Location"] == url.split("?")[0]
    page = staff.get(response["Location"])
    assert "cannot be applied" in page.content.decode()


@pytest.mark.parametrize("selected", ["abc", "", "1.5", "9" * 4401])
@pytest.mark.parametrize(
    ("url", "action"),
    [("/admin/palace/drawerlink/", "dismiss"), ("/admin/palace/drawer/", "supersede_selected")],
)
def test_an_action_on_a_selection_that_is_no_id_changes_nothing(
    staff, linked, url, action, selected
):
    before = (AuditEntry.objects.count(), Drawer.objects.current().count())
    response = staff.post(url, {"action": action, "_selected_action": [selected]})
    assert response.status_code == 302
    assert (AuditEntry.objects.count(), Drawer.objects.current().count()) == before
    assert DrawerLink.objects.get(pk=linked.pk).status == DrawerLink.Status.OPEN


@pytest.mark.parametrize("name", ["a\x01b", "\u200b", "tab\tname"])
def test_a_wing_or_room_named_as_the_api_refuses_is_a_form_error(staff, linked, name):
    wing = Wing.objects.get(name="ops")
    room = Room.objects.get(name="dev")
    for url, form in [
        ("/admin/palace/wing/add/", {"name": name, **_no_rooms()}),
        (f"/admin/palace/wing/{wing.pk}/change/", {"name": name, **_no_rooms()}),
        ("/admin/palace/room/add/", {"name": name, "wing": wing.pk}),
        (f"/admin/palace/room/{room.pk}/change/", {"name": name, "wing": wing.pk}),
    ]:
        response = staff.post(url, form)
        assert response.status_code == 200, url  # the form again, with its error
        assert "errornote" in response.content.decode(), url
    assert sorted(Wing.objects.values_list("name", flat=True)) == ["ops"]
    assert sorted(Room.objects.values_list("name", flat=True)) == ["dev"]


def test_two_rooms_swapping_names_in_the_wing_s_rows_is_a_message(staff, dedup_settings):
    first = services.room_get_or_create(wing="ops", room="first")
    second = services.room_get_or_create(wing="ops", room="second")
    wing = first.wing
    form = {
        "name": "ops",
        "rooms-TOTAL_FORMS": "2",
        "rooms-INITIAL_FORMS": "2",
        "rooms-0-id": first.pk,
        "rooms-0-wing": wing.pk,
        "rooms-0-name": "second",
        "rooms-1-id": second.pk,
        "rooms-1-wing": wing.pk,
        "rooms-1-name": "first",
    }
    response = staff.post(f"/admin/palace/wing/{wing.pk}/change/", form)
    assert response.status_code in (200, 302)
    assert Room.objects.get(pk=first.pk).name == "first"
    assert Room.objects.get(pk=second.pk).name == "second"


def _no_rooms() -> dict[str, str]:
    return {"rooms-TOTAL_FORMS": "0", "rooms-INITIAL_FORMS": "0"}
