"""Bug 22: bad input in the admin's drawer form is a form error beside its field, never a 500."""

import pytest

from dedup import services
from dedup.errors import Conflict
from dedup.forms import DrawerAddForm
from palace.models import Drawer

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at two in the morning and are kept for thirty days."


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


def test_a_name_taken_after_the_form_was_checked_is_a_form_error(admin_client, room, monkeypatch):
    """Another admin stores a drawer of that name between this form's checks and its write: the
    write is refused, and the form is shown again with the error beside the name, not a 500."""
    services.drawer_write(room=room, content="Other content entirely, about the NAS.", name="nas")
    checks = [lambda data: None]  # the first check runs before the other drawer was committed
    real = DrawerAddForm.refuse_a_taken_name
    monkeypatch.setattr(
        DrawerAddForm,
        "refuse_a_taken_name",
        lambda form, data: checks.pop()(data) if checks else real(form, data),
    )
    response = add(admin_client, room, name="nas")
    assert response.status_code == 200
    assert "name" in response.context["adminform"].form.errors


def test_a_write_refused_twice_is_a_message_not_a_500(admin_client, room, monkeypatch):
    def refused(**kwargs):
        raise Conflict("The room is being moved.")

    monkeypatch.setattr(services, "drawer_write", refused)
    response = add(admin_client, room)
    assert response.status_code == 302
    assert "The room is being moved." in admin_client.get(response["Location"]).content.decode()
