"""The admin against values it lets through to its queries or its services: lookups a query
string names, selections an action's form names, names the write path refuses. Each is a
message or a form error and changes nothing; none answers 500."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from dedup import services
from dedup.forms import WingForm
from dedup.validation import UNSCOPABLE_WING
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


# A name no path or key can name ('/' in a path, '*' and ',' in a key's wings): the write path
# and imports refused them, the admin's add and change stored them.
UNNAMEABLE = {"slash": "a/b", "every wing": "*", "comma": "ops,secret"}


@pytest.mark.parametrize("name", UNNAMEABLE.values(), ids=UNNAMEABLE.keys())
def test_a_wing_no_path_or_key_can_name_is_a_form_error(staff, linked, name):
    wing = Wing.objects.get(name="ops")
    for url in ["/admin/palace/wing/add/", f"/admin/palace/wing/{wing.pk}/change/"]:
        response = staff.post(url, {"name": name, **_no_rooms()})
        assert response.status_code == 200, url  # the form again, with its error
        assert "errornote" in response.content.decode(), url
    assert list(Wing.objects.values_list("name", flat=True)) == ["ops"]
    assert not AuditEntry.objects.filter(action="wing.rename").exists()


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("a/b", "wing must not contain '/'."),
        ("*", UNSCOPABLE_WING),
        ("ops,secret", UNSCOPABLE_WING),
    ],
)
def test_the_wing_form_says_why(name, error):
    form = WingForm(data={"name": name})
    assert not form.is_valid()
    assert form.errors["name"] == [error]


def test_a_room_with_a_slash_is_a_form_error(staff, linked):
    wing = Wing.objects.get(name="ops")
    room = Room.objects.get(name="dev")
    inline = {
        "name": "ops",
        "rooms-TOTAL_FORMS": "1",
        "rooms-INITIAL_FORMS": "0",
        "rooms-0-wing": wing.pk,
        "rooms-0-name": "q1/q2",
    }
    for url, form in [
        ("/admin/palace/room/add/", {"name": "q1/q2", "wing": wing.pk}),
        (f"/admin/palace/room/{room.pk}/change/", {"name": "q1/q2", "wing": wing.pk}),
        (f"/admin/palace/wing/{wing.pk}/change/", inline),
    ]:
        response = staff.post(url, form)
        assert response.status_code == 200, url
        assert "room must not contain &#x27;/&#x27;." in response.content.decode(), url
    assert list(Room.objects.values_list("name", flat=True)) == ["dev"]


def test_a_wing_added_as_a_look_alike_gets_the_name_a_write_gives(staff, linked):
    """ "ops\u200d" is "ops", taken: refused as a twin, not stored beside it; "beta\u200d" is beta."""
    response = staff.post("/admin/palace/wing/add/", {"name": "ops\u200d", **_no_rooms()})
    assert response.status_code == 200
    staff.post("/admin/palace/wing/add/", {"name": "beta\u200d", **_no_rooms()})
    assert sorted(Wing.objects.values_list("name", flat=True)) == ["beta", "ops"]


def test_a_room_stored_before_with_a_slash_does_not_stop_its_wing_being_saved(staff, linked):
    """An import restores a room's '/' (a backup's room "2024/q1"); the wing's other rows and
    its name still save, that room's row unchanged."""
    wing = Wing.objects.get(name="ops")
    restored = services.room_get_or_create(wing="ops", room="2024/q1", as_named=True)
    rows = {
        "rooms-TOTAL_FORMS": "2",
        "rooms-INITIAL_FORMS": "2",
        **{
            f"rooms-{index}-{field}": value
            for index, room in enumerate([Room.objects.get(name="dev"), restored])
            for field, value in [("id", room.pk), ("wing", wing.pk), ("name", room.name)]
        },
    }
    response = staff.post(f"/admin/palace/wing/{wing.pk}/change/", {"name": "ops2", **rows})
    assert response.status_code == 302
    assert Wing.objects.get().name == "ops2"
    assert Room.objects.get(pk=restored.pk).name == "2024/q1"
