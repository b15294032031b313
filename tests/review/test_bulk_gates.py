"""A bulk merge applies the gates an item's page warns of and a cluster's page leaves open: a
pair whose texts differ in a number, a date, a name or another word is left open, and the
result and the confirm page say how many and why. A wrong merge is worse than a missed one."""

import pytest

from dedup import services as write
from palace.models import AuditEntry, DrawerLink, Entity, EntityLink
from review import services
from tests.review.test_console_wording import shown

pytestmark = pytest.mark.django_db
PORT = "For local development always use port 8080 for the API server."
BACKUP = "Backups run nightly at two in the morning and are kept for thirty days."
TYPO = "The staging database is refreshed from an anonymised production dump every Monday."


@pytest.fixture
def links(dedup_settings):
    """Three near links: a port changed, a number word changed, and a typo."""
    found = {}
    for name, text, variant in (
        ("port", PORT, PORT.replace("8080", "8081")),
        ("hour", BACKUP, BACKUP.replace("two", "three")),
        ("typo", TYPO, TYPO.replace("refreshed", "refershed")),
    ):
        write.drawer_write_in(wing="ops", room=name, content=text)
        (link,) = write.drawer_write_in(wing="ops", room=name, content=variant).links
        found[name] = f"d{link.pk}"
    return found


def test_a_bulk_merge_leaves_pairs_whose_texts_differ_open(links, curator):
    result = services.decide_many(items=list(links.values()), action="merge", actor=curator)
    assert [entry.target_id for entry in result.decided] == [links["typo"]]
    assert result.held_back == {
        links["port"]: "the texts differ in a number or a date",
        links["hour"]: "the texts differ in a number written as a word",
    }
    assert result.refused == {}
    open_links = DrawerLink.objects.filter(status=DrawerLink.Status.OPEN)
    assert sorted(f"d{pk}" for pk in open_links.values_list("pk", flat=True)) == sorted(
        [links["port"], links["hour"]]
    )
    assert AuditEntry.objects.count() == 1


def test_a_bulk_dismiss_is_not_held_back(links, curator):
    result = services.decide_many(items=list(links.values()), action="dismiss", actor=curator)
    assert len(result.decided) == 3
    assert result.held_back == {}


def test_a_bulk_alias_of_names_whose_numbers_differ_is_held_back(dedup_settings, curator):
    one, two = (Entity.objects.create(name=n, key=n, kind="host") for n in ("db-01", "db-02"))
    link = EntityLink.objects.create(older=one, newer=two, similarity=0.8, distance=1)
    result = services.decide_many(items=[f"e{link.pk}"], action="add_alias", actor=curator)
    assert result.held_back == {f"e{link.pk}": "the texts differ in a number or a date"}
    assert EntityLink.objects.get().status == EntityLink.Status.OPEN


def test_the_console_says_how_many_were_left_open_and_why(links, as_curator):
    response = as_curator.post("/bulk", {"items": list(links.values()), "action": "merge"})
    page = shown(as_curator, response)
    assert "1 item decided in one batch" in page
    assert "2 items left open, not decided unseen:" in page
    assert f"{links['port']}: the texts differ in a number or a date" in page


def test_the_confirm_page_counts_the_pairs_left_open(links, as_curator):
    data = {"all_matching": "1", "filter": "", "action": "merge"}
    page = as_curator.post("/bulk", data).content.decode()
    assert "Merge 3 items?" in page
    assert "2 of them will be left open" in page
    assert "<strong>1</strong>: the texts differ in a number or a date" in page
    assert "Merge the other 1</button>" in page
    assert not AuditEntry.objects.exists()


def test_a_bulk_merge_leaves_a_normalized_pair_whose_symbol_changed_open(dedup_settings, curator):
    allowed = "Friday deploys are allowed for the billing service: \u2705"
    write.drawer_write_in(wing="ops", room="deploys", content=allowed)
    (link,) = write.drawer_write_in(
        wing="ops", room="deploys", content=allowed.replace("\u2705", "\u274c")
    ).links
    assert link.verdict == "normalized"
    result = services.decide_many(items=[f"d{link.pk}"], action="merge", actor=curator)
    assert result.held_back == {f"d{link.pk}": "the texts differ in a symbol"}
    assert DrawerLink.objects.get().status == DrawerLink.Status.OPEN
