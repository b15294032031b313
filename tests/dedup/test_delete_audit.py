"""A drawer's deletion keeps in its audit row what the drawer held: its fields, its links and its
mentions, each mention as an import reversal's row keeps one (`dedup.imports.reverse`), read in
one query however many there are. The mentions were missing: the row kept the fields and the
links only, though the deletion takes the mentions with the drawer."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dedup import services
from dedup.services import mention_kept
from palace.models import AuditEntry, Drawer, Mention

pytestmark = pytest.mark.django_db

TEXT = "The billing service retries a failed charge three times, an hour apart."
NAMES = ("Stripe", "Hannah Okafor", "Billing Team")


def drawer_naming(room: str, names: tuple[str, ...]) -> Drawer:
    room_ = services.room_get_or_create(wing="audit", room=room)
    drawer = services.drawer_write(room=room_, content=f"{room}: {TEXT}").drawer
    for index, name in enumerate(names):
        services.mention_add(drawer=drawer, name=name, provenance={"line": index + 1})
    return drawer


def deletion_row(drawer: Drawer) -> AuditEntry:
    return AuditEntry.objects.get(action="drawer.delete", target_id=str(drawer.uuid))


def test_the_audit_row_of_a_deletion_keeps_the_drawers_mentions(dedup_settings):
    drawer = drawer_naming("kept", NAMES)
    held = list(
        Mention.objects.filter(drawer=drawer)
        .order_by("id")
        .values("entity__name", "observation", "provenance")
    )
    assert len(held) == len(NAMES)
    services.drawer_delete(drawer=drawer)
    assert not Mention.objects.filter(drawer_id=drawer.pk).exists()
    mentions = deletion_row(drawer).before["mentions"]
    # The shape of an import reversal's row, so one reader serves both.
    assert mentions == [mention_kept(mention) for mention in held]
    assert [mention["entity"] for mention in mentions] == list(NAMES)
    assert [mention["provenance"] for mention in mentions] == [
        {"line": 1},
        {"line": 2},
        {"line": 3},
    ]
    assert all(mention["observation"] for mention in mentions)


def test_a_drawer_without_mentions_keeps_an_empty_list(dedup_settings):
    drawer = drawer_naming("none", ())
    services.drawer_delete(drawer=drawer)
    assert deletion_row(drawer).before["mentions"] == []


def test_the_mentions_are_read_in_one_query_however_many(dedup_settings):
    one, three = drawer_naming("one", NAMES[:1]), drawer_naming("three", NAMES)
    counts = []
    for drawer in (one, three):
        with CaptureQueriesContext(connection) as queries:
            services.drawer_delete(drawer=drawer)
        counts.append(len(queries))
    assert counts[0] == counts[1]
    assert len(deletion_row(three).before["mentions"]) == 3
