"""The console's cluster pages: the queue's cluster filter, one cluster, deciding it with and
without htmx, the 409 guard, the batch page and its revert, and the drawer pair's keep choice."""

import pytest

from palace.models import AuditEntry, Drawer, DrawerLink, EntityLink
from review import selectors
from review.services import ItemRef
from tests.review.clusters_data import ada_entities, five_drawers

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def cluster_ref():
    return f"d{DrawerLink.objects.order_by('pk').first().pk}"


def form(ref, **fates):
    """The form as the page posts it: every member, its fate (merge unless told), the links."""
    cluster = selectors.cluster_of(ItemRef.parse(ref))
    members = list(Drawer.objects.filter(pk__in=cluster.member_ids).order_by("pk"))
    data = {
        "canonical": str(members[0].uuid),
        "members": [str(m.uuid) for m in members[1:]],
        "links": ",".join(map(str, cluster.link_ids)),
    }
    for n, member in enumerate(members):
        data[f"fate-{member.uuid}"] = fates.get(f"m{n}", "merge")
    return data, members


def test_queue_lists_clusters_with_a_count(
    as_curator, dedup_settings, django_assert_max_num_queries
):
    five_drawers()
    ada_entities()
    with django_assert_max_num_queries(16):
        body = as_curator.get("/", {"type": "cluster"}).content.decode()
    assert "<strong>2</strong> clusters of 9 members" in body
    assert f'href="/clusters/{cluster_ref()}/"' in body
    partial = as_curator.get("/", {"type": "cluster", "kind": "person"}, **HTMX).content.decode()
    assert "<html" not in partial
    assert "<strong>1</strong> cluster of 4 members" in partial


def test_the_pairs_queue_offers_grouping(as_curator, dedup_settings):
    five_drawers()
    assert "type=cluster" in as_curator.get("/").content.decode()


def test_cluster_page_shows_members_diffs_and_evidence(as_curator, dedup_settings):
    drawers = five_drawers()
    body = as_curator.get(f"/clusters/{cluster_ref()}/").content.decode()
    assert "Cluster of 5 drawers" in body
    assert body.count('name="members"') == 4  # every member but the canonical
    assert body.count("<ins") + body.count("<del") >= 4  # each member but the canonical differs
    assert body.count('href="/items/d') == 10  # the links between them, as evidence
    # the oldest is canonical by default; each other member can be made canonical
    assert f'name="canonical" value="{drawers[0].uuid}"' in body
    assert body.count("make canonical") == 4


def test_another_link_of_the_cluster_redirects_to_its_name(as_curator, dedup_settings):
    five_drawers()
    last = DrawerLink.objects.order_by("-pk").first()
    response = as_curator.get(f"/clusters/d{last.pk}/")
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{cluster_ref()}/"


def test_a_pair_or_unknown_id_is_not_a_cluster(as_curator, drawer_link):
    assert as_curator.get(f"/clusters/d{drawer_link.pk}/").status_code == 404
    assert as_curator.get("/clusters/zz/").status_code == 404


def test_decide_without_htmx_goes_to_the_batch_page_then_reverts(as_curator, dedup_settings):
    five_drawers()
    ref = cluster_ref()
    data, _ = form(ref, m4="distinct")
    response = as_curator.post(f"/clusters/{ref}/decide", data)
    assert response.status_code == 302
    assert response["Location"].startswith("/batches/")
    assert Drawer.objects.current().count() == 2
    page = as_curator.get(response["Location"]).content.decode()
    assert "Revert all 10 decisions as one" in page  # 6 merged links, 4 deleted
    as_curator.post(response["Location"] + "revert")
    assert Drawer.objects.current().count() == 5
    assert set(DrawerLink.objects.values_list("status", flat=True)) == {"open"}
    assert DrawerLink.objects.count() == 10


def test_decide_with_htmx_redirects_the_client(as_curator, dedup_settings):
    ada_entities()
    ref = f"e{EntityLink.objects.order_by('pk').first().pk}"
    body = as_curator.get(f"/clusters/{ref}/").content.decode()
    assert 'name="mode" value="add_alias" checked' in body
    cluster = selectors.cluster_of(ItemRef.parse(ref))
    detail = selectors.cluster_detail(cluster.ref)
    data = {
        "canonical": str(detail.canonical.uuid),
        "members": [str(m.row.uuid) for m in detail.members[1:]],
        "links": ",".join(map(str, cluster.link_ids)),
        "mode": "add_alias",
        **{f"fate-{m.row.uuid}": "merge" for m in detail.members},
    }
    response = as_curator.post(f"/clusters/{ref}/decide", data, **HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith("/batches/")
    assert set(EntityLink.objects.values_list("status", flat=True)) == {"aliased"}


def test_a_stale_page_is_refused_with_409_and_changes_nothing(as_curator, dedup_settings):
    five_drawers()
    ref = cluster_ref()
    data, _ = form(ref)
    data["links"] = data["links"].rsplit(",", 1)[0]  # the page did not show the last link
    response = as_curator.post(f"/clusters/{ref}/decide", data, **HTMX)
    assert response.status_code == 409
    assert "changed since the page was shown" in response.content.decode()
    assert not AuditEntry.objects.exists()


def test_a_viewer_sees_no_decision_controls_and_gets_403(client, viewer, dedup_settings):
    five_drawers()
    client.force_login(viewer)
    ref = cluster_ref()
    assert 'name="members"' not in client.get(f"/clusters/{ref}/").content.decode()
    assert client.post(f"/clusters/{ref}/decide", form(ref)[0]).status_code == 403


def test_drawer_pair_offers_which_side_to_keep_and_keeps_the_newer(as_curator, drawer_link):
    body = as_curator.get(f"/items/d{drawer_link.pk}/").content.decode()
    assert 'data-key-canonical="2"' in body
    as_curator.post(
        f"/items/d{drawer_link.pk}/decide",
        {"action": "merge", "canonical": str(drawer_link.newer.uuid)},
    )
    older = Drawer.objects.get(pk=drawer_link.older_id)
    assert older.superseded_by_id == drawer_link.newer_id
    assert Drawer.objects.get(pk=drawer_link.newer_id).valid_to is None


def test_a_member_whose_numbers_differ_is_left_open_by_default(as_curator, dedup_settings):
    """A wrong merge is worse than a missed one: of a cluster's members, one whose date differs
    from the canonical's is offered "leave open", flagged, where a typo is offered "merge"."""
    import re

    from dedup import services
    from palace.models import DrawerLink

    room = services.room_get_or_create(wing="ops", room="releases")
    base = "The quarterly release of the billing service ships on 2026-03-15 to every region."
    services.drawer_write(room=room, content=base)
    typo = services.drawer_write(room=room, content=base.replace("billing", "biling")).drawer
    moved = services.drawer_write(room=room, content=base.replace("03-15", "03-16")).drawer
    link = DrawerLink.objects.filter(newer=typo).first()
    body = as_curator.get(f"/clusters/d{link.pk}/").content.decode()

    def checked(drawer):
        found = re.search(rf'name="fate-{drawer.uuid}" value="(\w+)" checked', body)
        return found and found[1]

    assert checked(typo) == "merge"
    assert checked(moved) == "open"
    assert "differs: check" in body


def test_a_member_whose_words_differ_is_left_open_and_a_copy_is_merged(as_curator, dedup_settings):
    """The demo's reading notes: "Ada recommended…" is not "Grace recommended…", though the
    name starts the sentence; a copy in capitals is the same fact, merged by default."""
    import re

    from dedup import services

    room = services.room_get_or_create(wing="research", room="reading")
    grace = "Grace recommended The Pragmatic Programmer for planning the storage migration."
    services.drawer_write(room=room, content=grace)
    shouted = services.drawer_write(room=room, content=grace.upper()).drawer
    ada = services.drawer_write(room=room, content=grace.replace("Grace", "Ada")).drawer
    body = as_curator.get(f"/clusters/{cluster_ref()}/").content.decode()

    def checked(drawer):
        found = re.search(rf'name="fate-{drawer.uuid}" value="(\w+)" checked', body)
        return found and found[1]

    assert checked(shouted) == "merge"
    assert checked(ada) == "open"
    assert body.count("differs: check") == 1
    assert "(a word)" in body
    link = DrawerLink.objects.filter(newer=ada).first()
    item = as_curator.get(f"/items/d{link.pk}/").content.decode()
    assert "The texts differ in a word</strong>" in item


def test_a_member_shows_its_own_text_its_case_marked(as_curator, dedup_settings):
    """A member stored in capitals was shown as the canonical's words, unmarked."""
    from dedup import services

    room = services.room_get_or_create(wing="personal", room="preferences")
    dark = "Ada prefers dark mode in every editor and terminal."
    for text in (dark, dark.upper(), dark.replace("dark", "light")):
        services.drawer_write(room=room, content=text)
    body = as_curator.get(f"/clusters/{cluster_ref()}/").content.decode()
    assert (
        '<span class="visually-hidden">in another case: </span>'
        "ADA PREFERS DARK MODE IN EVERY EDITOR AND TERMINAL.</span>" in body
    )
    assert body.count("The same words: only case, punctuation or spacing differ.") == 1


def test_the_cluster_list_shows_where_members_alike_at_first_differ(as_curator, dedup_settings):
    """Cut at 50 characters, two members read "Disk usage alerts fire at eighty percent on
    the d…" alike."""
    from dedup import services

    room = services.room_get_or_create(wing="castellan", room="ops")
    disk = "Disk usage alerts fire at eighty percent on the database volume."
    for text in (disk, disk.replace(".", "!"), disk.replace("eighty", "ninety")):
        services.drawer_write(room=room, content=text)
    body = as_curator.get("/", {"type": "cluster"}).content.decode()
    assert "“<bdi>…fire at eighty percent on the database volume!</bdi>”" in body
    assert "“<bdi>Disk usage alerts fire at ninety percent on the d…</bdi>”" in body
