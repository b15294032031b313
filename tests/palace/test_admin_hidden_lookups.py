"""A changelist's query string may name any lookup on a model's own fields (Django lets them
through): one into a field a page hides from its reader would say, by the count of results, what
the field holds (`?before__content__startswith=` spelled a deleted drawer's content a letter at a
time for a staff member who is no curator). Such a lookup is refused as Django refuses a lookup
it does not allow (400), never a 500; who may see the field may still filter by it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from dedup import services
from palace.models import AuditEntry, Import

pytestmark = pytest.mark.django_db

SECRET = "The launch code is 1234."


@pytest.fixture
def deleted(dedup_settings) -> AuditEntry:
    room = services.room_get_or_create(wing="ops", room="cut")
    services.drawer_delete(drawer=services.drawer_write(room=room, content=SECRET).drawer)
    return AuditEntry.objects.get(action="drawer.delete")


@pytest.fixture
def staffer(django_user_model) -> Client:
    """Staff, no curator: the audit log's rows, a deleted drawer's content blanked."""
    user = django_user_model.objects.create_user("staffer", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_auditentry"))
    user.user_permissions.add(Permission.objects.get(codename="view_import"))
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def results(client: Client, query: str) -> int:
    response = client.get(f"/admin/palace/auditentry/?{query}")
    assert response.status_code == 200
    return response.context["cl"].result_count


HIDDEN = {
    "the content, contained": "before__content__icontains=launch+code+is+1234",
    "the content, letter by letter": "before__content__startswith=T",
    "a key of it": "before__has_key=content",
    "the whole field": "before__isnull=False",
    "after": "after__isnull=True",
    "data": "data__has_key=links",
    "data, exact": "data__exact=%7B%7D",
}


@pytest.mark.parametrize("query", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_staff_member_who_is_no_curator_cannot_filter_by_what_the_log_hides(
    staffer, deleted, query
):
    response = staffer.get(f"/admin/palace/auditentry/?action=drawer.delete&{query}")
    assert response.status_code == 400


def test_the_filters_the_log_offers_still_apply(staffer, deleted):
    assert results(staffer, "action=drawer.delete") == 1
    assert results(staffer, "target_type__exact=drawer&q=drawer.delete") == 1
    assert staffer.get("/admin/palace/auditentry/?o=1").status_code == 200


def test_a_curator_or_an_admin_may_filter_by_what_they_see(admin_client, deleted):
    assert results(admin_client, HIDDEN["the content, contained"]) == 1
    assert results(admin_client, "before__content__icontains=nothing+of+the+kind") == 0


@pytest.mark.parametrize("query", ["upload__icontains=launch", "errors__isnull=False"])
def test_an_import_s_upload_and_errors_are_not_filtered_by(staffer, admin_client, query):
    Import.objects.create(source="up.jsonl", format="castellan", upload=SECRET)
    for client in (staffer, admin_client):  # the page shows neither to anyone
        assert client.get(f"/admin/palace/import/?{query}").status_code == 400
