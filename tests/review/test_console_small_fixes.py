"""Issue 13, defect 9: the small ones. A deleted item says what happened to it; "decided
today" counts what the queue lists; "answers through" names the entity; a bar's width is its
ratio; an invalid filter is an error, not the unfiltered list; the wing filter ignores case."""

import pytest

from dedup import services as write
from palace.models import Entity
from review import charts
from review import services as decisions
from review.selectors import QueueFilters, queue_counts, queue_page

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


# --- an item whose link is gone -----------------------------------------------------------------


def test_an_item_deleted_as_wrong_says_so(as_curator, drawer_link, curator):
    decisions.decide(item=f"d{drawer_link.pk}", action="delete_link", actor=curator)
    response = as_curator.get(f"/items/d{drawer_link.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "This link no longer exists: a curator deleted it as wrong (delete link)" in page
    assert "by cora on" in page


def test_an_item_whose_drawer_was_deleted_says_which_and_by_whom(as_curator, drawer_link, curator):
    newer = drawer_link.newer
    write.drawer_delete(drawer=newer, actor=curator)
    page = as_curator.get(f"/items/d{drawer_link.pk}/", **HTMX).content.decode()
    assert f"its drawer {newer.uuid} was deleted" in page
    assert f"?item={newer.uuid}" in page  # where the audit log has it


def test_an_item_that_never_existed_is_still_a_404(as_curator, drawer_link):
    assert as_curator.get(f"/items/d{drawer_link.pk + 1}/").status_code == 404


# --- "decided today" ----------------------------------------------------------------------------


def test_decided_today_counts_what_the_decided_queue_lists(curator, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="dev")
    base = "For local development always use port 8080 for the API server on the laptop."
    write.drawer_write(room=room, content=base)
    links = [
        write.drawer_write(room=room, content=base.replace("8080", str(port))).links[0]
        for port in (8081, 8082, 8083)
    ]
    first, second, third = (f"d{link.pk}" for link in links)
    decisions.decide(item=first, action="dismiss", actor=curator)
    reverted = decisions.decide(item=second, action="dismiss", actor=curator)
    decisions.revert(decision=reverted, actor=curator)  # open again
    again = decisions.decide(item=third, action="dismiss", actor=curator)
    decisions.revert(decision=again, actor=curator)
    decisions.decide(item=third, action="dismiss", actor=curator)  # decided twice, one item
    listed = queue_page(QueueFilters(status="decided")).items
    counts = queue_counts(QueueFilters(), curator)
    assert counts["decided_today"] == len(listed)
    assert counts["decided_today_by_you"] == 2


# --- "answers through" --------------------------------------------------------------------------


def test_answers_through_names_the_entity_and_links_it(as_curator, entity_link, curator):
    decisions.decide(item=f"e{entity_link.pk}", action="add_alias", actor=curator)
    page = as_curator.get(f"/items/e{entity_link.pk}/").content.decode()
    older = Entity.objects.get(pk=entity_link.older_id)
    assert f"entity {older.pk}" not in page
    assert f">{older.name}</a> (alias)" in page


# --- bars ---------------------------------------------------------------------------------------


def row(same, wrong):
    judged = same + wrong
    return {
        "tier": "near",
        "band": "0.90 to 0.95",
        "same": same,
        "wrong": wrong,
        "precision": same / judged,
    }


def bar_width(svg: str) -> str:
    return svg.split('class="bar"')[0].rsplit('width="', 1)[1].split('"')[0]


def test_a_bar_of_nought_is_empty_and_a_full_one_is_full():
    empty = str(charts.precision_bars([row(0, 1)]))
    full = str(charts.precision_bars([row(13, 0)]))
    assert bar_width(empty) == "0"
    assert bar_width(full) == str(charts.WIDTH - charts.LABEL - 90)
    assert "0% of 1" in empty


# --- filters ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"type": "Drawer"},
        {"min_similarity": "lots"},
        {"min_similarity": "0.9", "max_similarity": "0.5"},
        {"rule": "alias"},
    ],
    ids=["unknown type", "not a number", "min above max", "a proposal rule without a sweep"],
)
def test_an_invalid_filter_is_an_error_and_lists_nothing(as_curator, drawer_link, params):
    response = as_curator.get("/", params)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'role="alert"' in page
    assert f"/items/d{drawer_link.pk}/" not in page  # not silently the unfiltered list


def test_the_api_answers_an_invalid_filter_with_a_json_400(client, curator, drawer_link):
    client.force_login(curator)
    response = client.get("/api/review/queue", {"min_similarity": "0.9", "max_similarity": "0.5"})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_the_wing_filter_ignores_case(as_curator, drawer_link):
    page = as_curator.get("/", {"wing": "OPS"}).content.decode()
    assert f"/items/d{drawer_link.pk}/" in page


def test_a_decision_whose_link_is_gone_is_not_counted_decided_today(curator, dedup_settings):
    """A link deleted as wrong is in no list: "4 decided today" stood beside 3 decided."""
    room = write.room_get_or_create(wing="ops", room="dev")
    base = "For local development always use port 8080 for the API server on the laptop."
    write.drawer_write(room=room, content=base)
    kept, deleted = (
        write.drawer_write(room=room, content=base.replace("8080", port)).links[0]
        for port in ("8081", "8082")
    )
    decisions.decide(item=f"d{kept.pk}", action="dismiss", actor=curator)
    decisions.decide(item=f"d{deleted.pk}", action="delete_link", actor=curator)
    listed = queue_page(QueueFilters(status="decided")).items
    counts = queue_counts(QueueFilters(), curator)
    assert [str(item.ref) for item in listed] == [f"d{kept.pk}"]
    assert counts["decided_today"] == 1
    assert counts["decided_today_by_you"] == 1
