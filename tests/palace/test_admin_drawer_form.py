"""Bug 22: bad input in the admin's drawer form is a form error beside its field, never a 500."""

import pytest

from dedup import services
from palace.models import Drawer

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at two in the morning and are kept for thirty days."


@pytest.fixture
def room(dedup_settings):
    return services.room_get_or_create(wing="ops", room="backups")


def add(client, room, **fields):
    data = {"room": room.pk, "content": TEXT, "name": "", "kind": "", "agent": ""} | fields
    return client.post("/admin/palace/drawer/add/", data)


@pytest.mark.parametrize(
    ("field", "value"),
    [("kind", "Bad Kind!"), ("name", "bad\x07name"), ("agent", "bad\x07agent")],
    ids=["kind not a word", "name with a control character", "agent with a control character"],
)
def test_bad_field_is_shown_on_the_form(admin_client, room, field, value):
    response = add(admin_client, room, **{field: value})
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not Drawer.objects.exists()


def test_a_name_held_by_other_content_is_a_form_error(admin_client, room):
    services.drawer_write(room=room, content="Other content entirely, about the NAS.", name="nas")
    response = add(admin_client, room, name="nas")
    assert response.status_code == 200
    assert "name" in response.context["adminform"].form.errors


def test_a_good_kind_is_stored_lowercase(admin_client, room):
    add(admin_client, room, kind="Fact")
    assert Drawer.objects.get().kind == "fact"
