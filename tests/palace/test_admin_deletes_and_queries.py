"""The admin deletes a drawer with links or mentions through the service (Django asked for a
delete right on links and mentions, which are read-only in the admin, so it could not), its pages
take a fixed number of queries whatever rows or rooms they show, and its audit log hides a
deleted drawer's content from staff who are neither curators nor admins."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from dedup import services
from palace.models import AuditEntry, Checkpoint, Drawer, DrawerLink, Import, Mention

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at two in the morning and are kept for thirty days."


@pytest.fixture
def linked(dedup_settings) -> Drawer:
    """A drawer with a similar_to link to an older one and a mention of an entity."""
    room = services.room_get_or_create(wing="ops", room="backups")
    services.drawer_write(room=room, content=TEXT)
    newer = services.drawer_write(room=room, content=TEXT.replace("nightly", "nigthly")).drawer
    services.mention_add(drawer=newer, name="PostgreSQL", kind="tool")
    assert DrawerLink.objects.filter(newer=newer).exists()
    return newer


def test_a_drawer_with_links_and_mentions_is_deleted_in_the_admin(admin_client, linked):
    page = admin_client.get(f"/admin/palace/drawer/{linked.pk}/delete/")
    assert page.status_code == 200
    assert b"Are you sure" in page.content
    assert b"permission to delete" not in page.content
    response = admin_client.post(f"/admin/palace/drawer/{linked.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Drawer.objects.filter(pk=linked.pk).exists()
    assert not DrawerLink.objects.exists()
    assert not Mention.objects.exists()
    entry = AuditEntry.objects.get(action="drawer.delete")
    assert entry.before["content"] == linked.content
    assert len(entry.before["links"]) == 1


def test_drawers_with_links_are_deleted_by_the_admin_s_delete_action(admin_client, linked):
    selected = list(Drawer.objects.values_list("pk", flat=True))
    form = {"action": "delete_selected", "_selected_action": selected}
    page = admin_client.post("/admin/palace/drawer/", form)
    assert b"permission to delete" not in page.content
    admin_client.post("/admin/palace/drawer/", form | {"post": "yes"})
    assert not Drawer.objects.exists()
    assert AuditEntry.objects.filter(action="drawer.delete").count() == 2


def queries(client: Client, url: str) -> int:
    client.get(url)  # the content types' cache filled
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_checkpoints_and_imports_lists_take_the_same_queries_for_more_rows(
    admin_client, django_user_model
):
    def add(index: int) -> None:
        user = django_user_model.objects.create_user(f"writer{index}")
        Checkpoint.objects.create(key=f"cp-{index}", payload_hash="x", created_by=user)
        Import.objects.create(source=f"f{index}.jsonl", format="castellan", created_by=user)

    add(0)
    few = [queries(admin_client, f"/admin/palace/{page}/") for page in ("checkpoint", "import")]
    for index in range(1, 6):
        add(index)
    many = [queries(admin_client, f"/admin/palace/{page}/") for page in ("checkpoint", "import")]
    assert many == few


@pytest.mark.parametrize("page", ["drawer_add", "wing_change"])
def test_the_drawer_form_and_a_wing_s_rooms_take_the_same_queries_for_more_rooms(
    admin_client, dedup_settings, page
):
    first = services.room_get_or_create(wing="ops", room="room-0")
    url = {
        "drawer_add": "/admin/palace/drawer/add/",  # every room a choice
        "wing_change": f"/admin/palace/wing/{first.wing.pk}/change/",  # every room of the wing
    }[page]
    few = queries(admin_client, url)
    for index in range(1, 6):
        services.room_get_or_create(wing="ops", room=f"room-{index}")
        services.room_get_or_create(wing=f"wing-{index}", room="notes")
    assert queries(admin_client, url) == few


@pytest.fixture
def deleted_entry(linked) -> AuditEntry:
    services.drawer_delete(drawer=linked)
    return AuditEntry.objects.get(action="drawer.delete")


def test_a_staff_member_who_is_no_curator_does_not_see_deleted_content(
    django_user_model, deleted_entry
):
    staff = django_user_model.objects.create_user("staffer", is_staff=True)
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/palace/auditentry/{deleted_entry.pk}/change/")
    assert page.status_code == 200
    assert b"nigthly" not in page.content
    assert b"drawer.delete" in page.content


def test_an_admin_still_sees_deleted_content_in_the_audit_log(admin_client, deleted_entry):
    page = admin_client.get(f"/admin/palace/auditentry/{deleted_entry.pk}/change/")
    assert b"nigthly" in page.content
