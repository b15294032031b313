"""The admin writes through the same service as the API, and the audit log is read-only."""

import pytest
from django.contrib.admin.models import LogEntry

from dedup import services
from palace.models import AuditEntry, Drawer, DrawerLink

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at two in the morning and are kept for thirty days."


@pytest.fixture
def staff(admin_client, dedup_settings):
    return admin_client


def add(client, room, content):
    return client.post(
        "/admin/palace/drawer/add/",
        {"room": room.pk, "content": content, "name": "", "kind": "", "agent": ""},
        follow=True,
    )


def test_drawer_added_in_admin_goes_through_the_write_path(staff, room):
    add(staff, room, TEXT)
    drawer = Drawer.objects.get()
    assert drawer.fingerprint
    assert drawer.normalized_content
    assert drawer.source == {"via": "admin", "user": "admin"}
    response = add(staff, room, TEXT.replace("nightly", "nigthly"))
    assert Drawer.objects.count() == 2
    assert DrawerLink.objects.get().verdict == "near"
    assert b"linked to 1 similar drawer" in response.content


def test_exact_copy_added_in_admin_is_not_stored(staff, room):
    add(staff, room, TEXT)
    response = add(staff, room, TEXT)
    assert Drawer.objects.count() == 1
    assert b"An exact copy is already in this room" in response.content


def test_an_exact_copy_is_not_logged_as_added_nor_said_to_be(staff, room):
    add(staff, room, TEXT)
    drawer = Drawer.objects.get()
    response = add(staff, room, TEXT)
    assert response.redirect_chain[-1][0] == f"/admin/palace/drawer/{drawer.pk}/change/"
    assert b"was added successfully" not in response.content
    assert LogEntry.objects.filter(object_id=str(drawer.pk)).count() == 1  # the first add only


def test_superseding_drawers_superseded_already_says_so(staff, room):
    drawers = [services.drawer_write(room=room, content=f"{TEXT} Take {n}.").drawer for n in (1, 2)]
    services.drawer_supersede(drawer=drawers[0])
    response = staff.post(
        "/admin/palace/drawer/",
        {"action": "supersede_selected", "_selected_action": [d.pk for d in drawers]},
        follow=True,
    )
    assert b"1 selected drawer was superseded already." in response.content
    assert b"Superseded 1 drawer." in response.content


def test_blank_content_in_admin_is_refused(staff, room):
    response = add(staff, room, "   ")
    assert response.status_code == 200
    assert Drawer.objects.count() == 0


def test_admin_delete_is_audited(staff, room):
    drawer = services.drawer_write(room=room, content=TEXT).drawer
    staff.post(f"/admin/palace/drawer/{drawer.pk}/delete/", {"post": "yes"})
    assert not Drawer.objects.exists()
    assert AuditEntry.objects.get().action == "drawer.delete"


def test_existing_drawer_is_read_only_in_admin(staff, room):
    drawer = services.drawer_write(room=room, content=TEXT).drawer
    response = staff.get(f"/admin/palace/drawer/{drawer.pk}/change/")
    assert response.status_code == 200
    assert b'name="content"' not in response.content


def test_audit_log_is_read_only_in_admin_and_in_code(staff, room):
    drawer = services.drawer_write(room=room, content=TEXT).drawer
    services.drawer_supersede(drawer=drawer)
    entry = AuditEntry.objects.get()
    assert staff.get("/admin/palace/auditentry/").status_code == 200
    assert staff.get("/admin/palace/auditentry/add/").status_code == 403
    assert (
        staff.post(f"/admin/palace/auditentry/{entry.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    with pytest.raises(PermissionError):
        entry.delete()
    with pytest.raises(PermissionError):
        entry.save()
    with pytest.raises(PermissionError):
        AuditEntry.objects.all().delete()
    assert AuditEntry.objects.count() == 1


@pytest.mark.parametrize(
    "page",
    [
        "wing",
        "room",
        "drawer",
        "drawerlink",
        "entity",
        "entitylink",
        "mention",
        "checkpoint",
        "auditentry",
    ],
)
def test_every_admin_list_renders(staff, room, page):
    services.drawer_write(room=room, content=TEXT)
    assert staff.get(f"/admin/palace/{page}/").status_code == 200


def test_an_audit_row_of_a_deleted_user_still_shows_in_the_admin(staff, room, django_user_model):
    gone = django_user_model.objects.create_user("gone", password="secret-pass-9")
    drawer = services.drawer_write(room=room, content=TEXT).drawer
    services.drawer_delete(drawer=drawer, actor=gone)
    entry = AuditEntry.objects.get(action="drawer.delete")
    gone_id = gone.pk
    gone.delete()
    assert AuditEntry.objects.get(pk=entry.pk).actor_id == gone_id
    assert staff.get("/admin/palace/auditentry/").status_code == 200
    response = staff.get(f"/admin/palace/auditentry/{entry.pk}/change/")
    assert response.status_code == 200
    assert b"gone" in response.content


@pytest.mark.parametrize(
    ("action", "service", "race"),
    [
        ("supersede_selected", "drawer_supersede", services.drawer_supersede),
        ("delete_selected", "drawer_delete", services.drawer_delete),
    ],
)
def test_a_drawer_changed_meanwhile_is_refused_in_words_and_the_others_go_ahead(
    staff, room, monkeypatch, action, service, race
):
    """Another request supersedes or deletes the first drawer between the page and the action:
    the service's refusal is a message, not a 500."""
    first, second = (
        services.drawer_write(room=room, content=f"{TEXT} {n}.").drawer for n in (1, 2)
    )
    real = getattr(services, service)

    def raced(*, drawer, **kwargs):
        if drawer.pk == first.pk:
            race(drawer=Drawer.objects.get(pk=first.pk))  # the other request, committed first
        return real(drawer=drawer, **kwargs)

    monkeypatch.setattr(services, service, raced)
    form = {"action": action, "_selected_action": [first.pk, second.pk], "post": "yes"}
    response = staff.post("/admin/palace/drawer/", form, follow=True)
    assert response.status_code == 200
    assert f"Drawer {first.uuid}: ".encode() in response.content
    changed = Drawer.objects.filter(pk=second.pk, valid_to__isnull=True).exists()
    assert not changed
    assert b"superseded already" not in response.content  # refused meanwhile, said so above
