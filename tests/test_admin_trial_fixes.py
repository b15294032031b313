"""What an administrator's trial of the admin found: a drawer with links or mentions could not be
deleted there (Django asked for a delete right on links and mentions, which are read-only in the
admin, though the service deletes them with the drawer and audits them); pages whose queries grew
with the rows or rooms they show; and the audit log showing a deleted drawer's content to a staff
member who is neither a curator nor an admin."""

from __future__ import annotations

import pytest
from django.test import Client

from dedup import services
from palace.models import AuditEntry, Drawer, DrawerLink, Mention

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
