"""The diff where decisions are made: in the queue rows, on the item page with its word flags,
and on a sweep's sample cards (issue 13, capability 12)."""

import pytest

from dedup import services as write
from dedup.services import DedupConfig
from review.models import SweepRun
from review.services import sweeps as sweep_services

pytestmark = pytest.mark.django_db
OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
FACT = "The staging database is refreshed from an anonymised production dump every Monday."


def test_queue_row_shows_the_changed_words_not_both_texts(as_curator, drawer_link):
    body = as_curator.get("/").content.decode()
    removed = '<del class="flagged" title="number differs"><span class="visually-hidden">removed: </span>8080</del>'
    added = '<ins class="flagged" title="number differs"><span class="visually-hidden">added: </span>8081</ins>'
    assert removed in body
    assert added in body
    assert "always use port" in body  # a few words of context
    assert "For local development" not in body  # not the whole text


def test_queue_row_of_a_proposal_shows_its_diff(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for text in (FACT, FACT.replace("Monday", "Friday")):
        write.drawer_write(room=room, content=text, mode=write.WriteMode.MINED, config=OFF)
    run = sweep_services.execute(sweep_services.start(wing="ops", threshold=0.9))
    body = as_curator.get("/", {"run": run.pk}).content.decode()
    assert (
        'title="weekday differs"><span class="visually-hidden">removed: </span>Monday.</del>'
        in body
    )


def test_item_page_flags_a_differing_weekday_and_number_word(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="dev")
    older = "Keep three replicas of the staging database and refresh them every Tuesday."
    write.drawer_write(room=room, content=older)
    newer = older.replace("three", "four").replace("Tuesday", "Thursday")
    (link,) = write.drawer_write(room=room, content=newer).links
    body = as_curator.get(f"/items/d{link.pk}/").content.decode()
    assert "The texts differ in a number written as a word, a weekday" in body
    assert "three → four; Tuesday → Thursday" in body
    assert 'class="flagged" title="weekday differs"' in body


def test_sweep_sample_card_shows_the_diff_and_its_flags(as_curator, dedup_settings):
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for text in (FACT, FACT.replace("Monday", "Friday")):
        write.drawer_write(room=room, content=text, mode=write.WriteMode.MINED, config=OFF)
    run = sweep_services.execute(sweep_services.start(wing="ops", threshold=0.9))
    assert run.status == SweepRun.Status.DONE
    as_curator.post(f"/sweeps/{run.pk}/", {"action": "sample", "per_stratum": "2"})
    body = as_curator.get(f"/sweeps/{run.pk}/").content.decode()
    card = body[body.index("To judge") : body.index("Apply or reverse")]
    assert 'class="flagged" title="weekday differs">Mon' in card
    assert "The texts differ in a weekday" in card


def test_item_page_warns_of_a_chinese_numeral_and_weekday(as_curator, dedup_settings):
    """One numeral apart, the write path links the two near: the page must warn."""
    room = write.room_get_or_create(wing="ops", room="dev")
    older = "我们决定把四台数据库服务器迁移到新的机房，时间定在星期三晚上十点"
    write.drawer_write(room=room, content=older)
    newer = older.replace("四台", "五台").replace("星期三", "星期日")
    (link,) = write.drawer_write(room=room, content=newer).links
    body = as_curator.get(f"/items/d{link.pk}/").content.decode()
    assert "(四 → 五)" in body  # 十 (ten o'clock) in both; 三 of 星期三 is the weekday's
    assert "(星期三 → 星期日)" in body
    assert '<ins class="digit">五</ins>' in body


def test_queue_row_of_a_copy_in_capitals_shows_the_newer_text_marked(as_curator, dedup_settings):
    """The row showed the older text, unmarked, as if nothing differed."""
    room = write.room_get_or_create(wing="ops", room="dev")
    write.drawer_write(room=room, content=FACT)
    write.drawer_write(room=room, content=FACT.upper())
    body = as_curator.get("/").content.decode()
    assert f'<span class="visually-hidden">in another case: </span>{FACT.upper()[:40]}' in body
    assert f'title="written “{FACT[:40]}' in body
