"""A big room's word groups: the sample estimates each group's matches in the room, so a group
that would fill its lookup's bound takes another seen word, or is not asked."""

import pytest
from django.db import connection, transaction

from dedup import candidates, policy, services
from dedup.candidates import room_words
from dedup.candidates.room_words import Sample
from dedup.locks import room_writes
from palace.models import Drawer
from tests.dedup.drawers_data import IndexAsked, bulk_drawers, spy_index

SAMPLED = room_words.SAMPLE_DRAWERS
# A room of a million drawers, as its sample of 1,000 sees it: two frequent words that come
# together in a tenth of the room, two rare ones (three sampled drawers each), two unseen.
BIG = Sample(
    seen={"copper": 100, "timber": 100, "harbor": 3, "ledger": 3},
    sampled=SAMPLED,
    drawers=1_000_000,
    masks={"copper": (1 << 100) - 1, "timber": (1 << 100) - 1},
)
WORDS = ["kettlebrook", "lanternfish", "copper", "timber", "harbor", "ledger"]


@pytest.fixture
def every_word_held(monkeypatch):
    """The room's index holds every word asked of it (`candidates.words_in_room`): the tests of
    group choices that no word's absence decides."""
    spy_index(monkeypatch, IndexAsked.ALL)


@pytest.fixture
def big_room(monkeypatch, every_word_held):
    monkeypatch.setattr(room_words, "sample", lambda room_id: BIG)


def test_words_that_come_together_are_estimated_by_the_drawers_holding_both():
    assert BIG.matches(["copper", "timber"]) == pytest.approx(100_000)


def test_rare_words_are_estimated_as_independent():
    assert BIG.matches(["harbor", "ledger"]) == pytest.approx(9)


def test_an_unseen_word_counts_as_in_one_sampled_drawer():
    assert BIG.matches(["kettlebrook"]) == pytest.approx(1_000)


def test_no_group_asked_in_a_big_room_would_fill_its_bound(big_room):
    groups = candidates.query_groups(1, WORDS, candidates.LEXICAL_GROUPS)
    assert max(BIG.matches(group) for group in groups) < room_words.SKIPPED_MATCHES


def test_a_group_too_common_takes_the_rarest_seen_word_left(big_room):
    groups = candidates.query_groups(1, WORDS, candidates.LEXICAL_GROUPS)
    assert ["kettlebrook", "copper"] in groups


def test_a_pair_of_frequent_words_is_not_asked(big_room):
    groups = candidates.query_groups(1, WORDS, candidates.LEXICAL_GROUPS)
    assert not any({"copper", "timber"} <= set(group) for group in groups)


def test_rare_seen_words_stay_a_pair(big_room):
    groups = candidates.query_groups(1, WORDS, candidates.LEXICAL_GROUPS)
    assert ["harbor", "ledger"] in groups


# A room of a million drawers whose template words (common: in more than 2% of the sample) are
# "ember", "flint" and "cinder"; "harbor" and "ledger" are rarer words it holds.
TEMPLATED = Sample(
    common=frozenset({"ember", "flint", "cinder"}),
    seen={"ember": 300, "flint": 250, "cinder": 40, "harbor": 3, "ledger": 3},
    sampled=SAMPLED,
    drawers=1_000_000,
)
# Rarer than the template words: one real word the sample missed and one typo, no seen word.
FEW_RARE = ["kettlebrook", "lanternfysh", "ember", "flint", "cinder"]


@pytest.fixture
def templated_sample(monkeypatch):
    monkeypatch.setattr(room_words, "sample", lambda room_id: TEMPLATED)


@pytest.fixture
def templated_room(templated_sample, every_word_held):
    pass


def selective(groups):
    return [group for group in groups if TEMPLATED.matches(group) < candidates.GROUP_MATCHES]


@pytest.mark.parametrize(
    "words",
    [
        FEW_RARE,
        ["kettlebrook", "harbor", "ember", "flint", "cinder"],
        ["kettlebrook", "lanternfysh", "harbor", "ember", "cinder", "flint"],
    ],
)
def test_whichever_rarer_word_a_corruption_breaks_a_selective_group_is_left(templated_room, words):
    groups = candidates.query_groups(1, words, candidates.LEXICAL_GROUPS)
    for broken in ("kettlebrook", "lanternfysh", "harbor"):
        if broken in words:
            assert any(broken not in group for group in selective(groups)), broken


def test_a_text_whose_rarer_words_each_match_too_much_gets_them_narrowed_by_common_words(
    templated_room,
):
    """Each rarer word alone is estimated at 1,000 matches, so no group was asked at all."""
    groups = candidates.query_groups(1, FEW_RARE, candidates.LEXICAL_GROUPS)
    assert groups == [["lanternfysh", "cinder", "flint"], ["kettlebrook", "cinder", "flint"]]


def test_a_rarer_word_and_a_typo_each_get_a_group_without_the_other(templated_room):
    groups = candidates.query_groups(1, ["harbor", "qwzzle", "ember", "flint", "cinder"], 5)
    assert groups == [
        ["qwzzle", "harbor"],
        ["harbor", "cinder", "flint"],
        ["qwzzle", "cinder", "flint"],
    ]


def test_common_words_too_frequent_together_make_no_group(monkeypatch, templated_sample):
    """The text's only rarer word is a typo no drawer of the room holds, and the common words
    left, all three together, are estimated at 3,000 matches: nothing is asked."""
    spy_index(monkeypatch, set())
    assert candidates.query_groups(1, ["qwzzle", "ember", "flint", "cinder"], 5) == []


# A room of a million drawers whose common words are rare together: "ember", "flint" and
# "cinder" together in an estimated 19 of its drawers (no masks: estimated as independent).
SPARSE = Sample(
    common=frozenset({"ember", "flint", "cinder"}),
    seen={"ember": 30, "flint": 26, "cinder": 24, "harbor": 3},
    sampled=SAMPLED,
    drawers=1_000_000,
)


@pytest.fixture
def sparse_sample(monkeypatch):
    monkeypatch.setattr(room_words, "sample", lambda room_id: SPARSE)


def test_a_text_whose_only_rarer_word_no_drawer_holds_asks_its_common_words_alone(
    monkeypatch, sparse_sample
):
    """The last resort: a typo broke its only rarer word, so no drawer holds it."""
    spy_index(monkeypatch, set())
    groups = candidates.query_groups(1, ["qwzzle", "ember", "flint", "cinder"], 5)
    assert groups == [["cinder", "flint", "ember"]]


def test_a_group_without_a_text_s_only_rarer_word_is_made_of_common_words(
    sparse_sample, every_word_held
):
    """Its one group held "qwzzle", so a typo there would leave none: the common words make
    one without it."""
    groups = candidates.query_groups(1, ["qwzzle", "ember", "flint", "cinder"], 5)
    assert groups == [["qwzzle", "cinder"], ["cinder", "flint", "ember"]]


def test_common_words_are_not_asked_alone_while_each_rarer_word_has_a_group_without_it(
    sparse_sample, every_word_held
):
    groups = candidates.query_groups(1, ["qwzzle", "harbor", "ember", "flint", "cinder"], 5)
    assert groups == [["qwzzle", "harbor"], ["harbor", "cinder", "flint"], ["qwzzle", "cinder"]]


def test_a_text_s_one_rarer_word_is_narrowed_by_common_words(templated_room):
    """Estimated at 1,000 matches alone, it is asked with the rarest common words."""
    groups = candidates.query_groups(1, ["qwzzle", "ember", "flint", "cinder"], 5)
    assert groups == [["qwzzle", "cinder", "flint"]]


def test_a_text_without_common_words_is_covered_too(templated_room):
    groups = candidates.query_groups(1, ["kettlebrook", "lanternfysh", "harbor"], 5)
    assert groups == [
        ["kettlebrook", "harbor"],
        ["lanternfysh", "harbor"],
        ["kettlebrook", "lanternfysh"],
    ]


def test_groups_added_stay_within_the_query_s_groups(templated_room):
    words = ["kettlebrook", "lanternfysh", "moonstruck", "ember", "cinder"]
    assert len(candidates.query_groups(1, words, 3)) == 3 - room_words.BIG_ROOM_GROUPS_SAVED


RARE_WORDS = [f"{a}{b}" for a in ("kettle", "lantern", "moon") for b in ("brook", "fish", "stone")]


def test_a_big_room_asks_a_group_fewer(templated_room):
    """Its groups hold only words some drawer of the room holds (`words_in_room`)."""
    groups = candidates.query_groups(1, RARE_WORDS, candidates.LEXICAL_GROUPS)
    assert len(groups) == candidates.LEXICAL_GROUPS - room_words.BIG_ROOM_GROUPS_SAVED


def test_a_room_under_the_big_size_asks_every_group(monkeypatch):
    small = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, room_words.COMMON_WORDS_LEFT_OUT - 1)
    monkeypatch.setattr(room_words, "sample", lambda room_id: small)
    groups = candidates.query_groups(1, RARE_WORDS, candidates.LEXICAL_GROUPS)
    assert len(groups) == candidates.LEXICAL_GROUPS


def test_a_room_under_the_big_size_gets_no_group_more(monkeypatch):
    small = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, room_words.COMMON_WORDS_LEFT_OUT - 1)
    monkeypatch.setattr(room_words, "sample", lambda room_id: small)
    groups = candidates.query_groups(1, ["kettlebrook", "lanternfysh", "harbor"], 5)
    assert groups == [["kettlebrook", "harbor"], ["lanternfysh"]]


def test_a_text_whose_groups_survive_any_corruption_gets_no_group_more(templated_room):
    words = ["kettlebrook", "lanternfish", "moonstruck", "harbor", "ledger", "ember", "flint"]
    groups = candidates.query_groups(1, words, candidates.LEXICAL_GROUPS)
    assert groups == [["kettlebrook", "moonstruck"], ["harbor", "ledger"]]


@pytest.mark.parametrize(
    ("word", "why"),
    [
        ("cindr", "a typo"),
        ("cindre", "a typo"),
        ("inder", "a piece of a split"),
        ("cinde", "a piece of a split"),
        ("emberharbor", "a join"),
        ("harborember", "a join"),
    ],
)
def test_a_corruption_of_a_template_word_is_told(word, why):
    assert TEMPLATED.corrupts_common(word), why


@pytest.mark.parametrize(
    "word",
    [
        "kettlebrook",
        "lanternfysh",
        "emb",
        "flinders",
        "emberkettle",  # run together with a word the room does not hold
        "embers",  # a plural: the common word with a character more at its end
        "ember1",
        "cinderof",  # run together with a word of fewer than 3 characters
        "cind",  # a piece shorter than 5 characters
    ],
)
def test_a_word_unlike_the_template_words_is_not_a_corruption_of_them(word):
    assert not TEMPLATED.corrupts_common(word)


def test_a_corruption_of_a_template_word_is_not_asked_when_the_text_has_other_words(
    templated_room,
):
    words = ["kettlebrook", "lanternfish", "cindre", "harbor", "ledger", "ember"]
    groups = candidates.query_groups(1, words, candidates.LEXICAL_GROUPS)
    assert groups == [["harbor", "ledger"], ["kettlebrook", "lanternfish"]]


def test_a_template_word_s_corruption_is_asked_when_nothing_else_is_left(templated_room):
    """A single seen word makes no pair: the corruption pairs with it, as any unseen word
    would."""
    groups = candidates.query_groups(1, ["harbor", "cinders", "ember"], 5)
    assert groups == [["cinders", "harbor"]]


def test_a_join_with_a_common_stop_word_is_not_a_corruption():
    """ "which" is common in an English room, but not one of the words a corruption is told by."""
    room = Sample(
        common=frozenset({"which", "ember"}), seen={"which": 600, "ember": 900, "team": 40}
    )
    assert not room.corrupts_common("whichteam")
    assert room.corrupts_common("emberteam")


def test_a_long_template_word_two_edits_off_is_a_corruption_of_it():
    room = Sample(common=frozenset({"retrospective"}), seen={"retrospective": 900})
    assert room.corrupts_common("retrosepctiv")


def test_in_a_room_under_the_big_size_a_template_word_s_corruption_is_asked(monkeypatch):
    small = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, room_words.COMMON_WORDS_LEFT_OUT - 1)
    monkeypatch.setattr(room_words, "sample", lambda room_id: small)
    groups = candidates.query_groups(1, ["kettlebrook", "cindre", "harbor", "ledger"], 5)
    assert ["cindre"] in groups


def test_a_word_alone_estimated_to_fill_its_bound_takes_a_seen_word(monkeypatch, every_word_held):
    """In a room of 100,000, an unseen word alone is estimated at 100 matches: its lookup
    would keep the newest 64."""
    room = Sample(seen={"harbor": 3}, sampled=SAMPLED, drawers=100_000)
    monkeypatch.setattr(room_words, "sample", lambda room_id: room)
    groups = candidates.query_groups(1, ["kettlebrook", "harbor"], candidates.LEXICAL_GROUPS)
    assert groups == [["kettlebrook", "harbor"]]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("sample", "original", "variant"),
    [
        pytest.param(
            TEMPLATED,
            "The kettlebrook and the lanternfish, with ember, flint and cinder.",
            "The kettlebrook and the lanternfysh, with ember, flint and cinder.",
            id="its-only-intact-rarer-word-narrowed",
        ),
        pytest.param(
            SPARSE,
            "The kettlebrook, with the ember, the flint and the cinder.",
            "The kettlebrok, with the ember, the flint and the cinder.",
            id="its-common-words-alone",
        ),
    ],
)
def test_a_variant_in_a_big_room_finds_its_original_through_common_words(
    dedup_settings, monkeypatch, sample, original, variant
):
    """End to end: the write's only intact rarer word, narrowed by the room's common words, or
    when the typo broke its only rarer word (held by no drawer), the common words alone (the
    last resort), find the original. Without them, no group is asked and nothing is linked."""
    monkeypatch.setattr(room_words, "sample", lambda room_id: sample)
    room = services.room_get_or_create(wing="ops", room="big")
    stored = services.drawer_write(room=room, content=original).drawer
    written = services.drawer_write(room=room, content=variant)
    assert [link.older_id for link in written.links] == [stored.pk]


@pytest.mark.django_db
def test_a_sample_counts_its_room_and_which_drawers_hold_each_frequent_word(dedup_settings):
    room = services.room_get_or_create(wing="ops", room="estimates")
    texts = [f"pump {n} valve station report" for n in range(room_words.MIN_SAMPLE_DRAWERS)]
    bulk_drawers(room, texts)
    room_words.forget()
    found = room_words.sample(room.id)
    assert found.matches(["valve", "station"]) == pytest.approx(len(texts))
    assert found.once == frozenset()  # a room under COMMON_WORDS_LEFT_OUT


@pytest.mark.django_db
def test_a_big_room_s_sample_keeps_the_words_of_one_sampled_drawer(dedup_settings, monkeypatch):
    monkeypatch.setattr(room_words, "COMMON_WORDS_LEFT_OUT", room_words.MIN_SAMPLE_DRAWERS)
    room = services.room_get_or_create(wing="ops", room="once")
    texts = [f"pump valve{n} station report" for n in range(room_words.MIN_SAMPLE_DRAWERS)]
    texts[0] += " kettlebrook"
    bulk_drawers(room, texts)
    room_words.forget()
    found = room_words.sample(room.id)
    assert "kettlebrook" in found.once
    assert "valve7" in found.once
    assert "pump" not in found.once


@pytest.mark.django_db
@pytest.mark.parametrize("newest_only", [False, True])
def test_a_group_s_lookup_keeps_its_room_s_newest_matches_only(dedup_settings, newest_only):
    """A group's lookup asks its words' terms in the room: another room's drawers holding the
    same words are never found, and of the room's, the group's newest GROUP_MATCHES."""
    room = services.room_get_or_create(wing="ops", room="inside")
    other = services.room_get_or_create(wing="ops", room="outside")
    count = 2 * candidates.GROUP_MATCHES if newest_only else 5
    for target in (room, other, room):
        texts = [f"copper timber ledger {n} harbor note {target.pk}" for n in range(count)]
        bulk_drawers(target, texts)
    scope = candidates.Scope(room=room)
    groups = [["copper", "timber"], ["harbor", "ledger"]]
    found = [c.id for c in candidates.for_text(scope, "", None, [], word_groups=groups).lexical]
    room_ids = Drawer.objects.filter(room=room).order_by("-pk").values_list("pk", flat=True)
    newest = list(room_ids[: min(candidates.GROUP_MATCHES, candidates.LEXICAL_CANDIDATES)])
    assert found == newest


def test_a_word_the_room_s_index_lacks_is_in_no_group(monkeypatch, templated_sample):
    """The sample cannot tell a rare word of the room from a corruption: the index can, and a
    group holding a word no drawer of the room holds would match nothing."""
    spy_index(monkeypatch, {"kettlebrook", "moonstruck"})
    words = ["lanternfysh", "kettlebrook", "moonstruck", "qwzzle", "harbor", "ember"]
    groups = candidates.query_groups(1, words, candidates.LEXICAL_GROUPS)
    asked = {word for group in groups for word in group}
    assert "lanternfysh" not in asked
    assert "qwzzle" not in asked
    assert ["kettlebrook", "moonstruck"] in groups


def test_the_index_is_asked_only_of_a_big_room_s_unseen_words(monkeypatch, templated_sample):
    index = spy_index(monkeypatch, IndexAsked.ALL)
    candidates.query_groups(1, ["kettlebrook", "harbor", "ledger", "ember"], 5)
    assert index.words == [["kettlebrook"]]


def test_a_word_in_one_sampled_drawer_is_held_without_asking(monkeypatch):
    room = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, 1_000_000, once=frozenset({"moor"}))
    monkeypatch.setattr(room_words, "sample", lambda room_id: room)
    index = spy_index(monkeypatch, set())
    groups = candidates.query_groups(1, ["kettlebrook", "moor", "harbor", "ember"], 5)
    assert index.words == [["kettlebrook"]]
    assert "moor" in {word for group in groups for word in group}


def test_a_room_under_the_big_size_asks_its_index_nothing(monkeypatch):
    small = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, room_words.COMMON_WORDS_LEFT_OUT - 1)
    monkeypatch.setattr(room_words, "sample", lambda room_id: small)
    index = spy_index(monkeypatch, IndexAsked.ALL)
    assert candidates.query_groups(1, ["kettlebrook", "lanternfysh", "harbor"], 5)
    assert index.calls == []


@pytest.mark.django_db
def test_the_index_tells_which_words_drawers_of_the_room_hold(dedup_settings):
    room = services.room_get_or_create(wing="ops", room="held")
    other = services.room_get_or_create(wing="ops", room="elsewhere")
    for target, text in [
        (room, "kettlebrook harbor ledger"),
        (room, "kettlebrook moonstruck"),
        (other, "lanternfish moonstruck"),
    ]:
        services.drawer_write(room=target, content=text)
    words = ["kettlebrook", "moonstruck", "lanternfish", "qwzzle", "kettlebrook"]
    assert candidates.words_in_room(room.id, words) == {"kettlebrook", "moonstruck"}
    assert candidates.words_in_room(room.id, words, holders=2) == {"kettlebrook"}
    assert candidates.words_in_room(room.id, []) == set()


@pytest.mark.django_db
def test_a_write_asks_the_index_after_its_lock(dedup_settings, templated_sample, monkeypatch):
    """Read under the writer's lock, as its candidates are (PostgreSQL takes it first)."""
    index = spy_index(monkeypatch)
    room = services.room_get_or_create(wing="ops", room="locked")
    text = "The kettlebrook and the lanternfish, with ember, flint and cinder."
    services.drawer_write(room=room, content=text)
    assert len(index.calls) == 1
    assert index.options[0]["lock"] == room_writes(room.id)


def test_words_known_absent_are_left_out_without_asking_the_index(monkeypatch, templated_sample):
    """A sweep's batch gives the words no other drawer holds: only those are left out."""
    index = spy_index(monkeypatch, IndexAsked.ALL)
    words = ["lanternfysh", "kettlebrook", "moonstruck", "harbor", "ember"]
    groups = candidates.query_groups(1, words, 5, absent={"lanternfysh", "ember"})
    assert index.calls == []
    asked = {word for group in groups for word in group}
    assert "lanternfysh" not in asked
    assert {"kettlebrook", "moonstruck"} <= asked


def test_a_word_an_earlier_write_found_held_is_not_asked_again(monkeypatch):
    room = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, 1_000_000)
    monkeypatch.setattr(room_words, "_samples", {1: (float("inf"), 10, room)})
    monkeypatch.setattr(room_words, "_held", {})
    monkeypatch.setattr(room_words, "sample", lambda room_id: room)
    index = spy_index(monkeypatch, {"kettlebrook"})
    candidates.query_groups(1, ["kettlebrook", "lanternfysh", "harbor"], 5)
    candidates.query_groups(1, ["kettlebrook", "lanternfysh", "ledger"], 5)
    assert index.words == [["kettlebrook", "lanternfysh"], ["lanternfysh"]]


def test_a_sweep_asks_the_words_two_drawers_hold_whatever_the_sample_holds(monkeypatch):
    room = Sample(TEMPLATED.common, TEMPLATED.seen, SAMPLED, 1_000_000, once=frozenset({"moor"}))
    monkeypatch.setattr(room_words, "sample", lambda room_id: room)
    index = spy_index(monkeypatch, IndexAsked.ALL)
    candidates.query_groups(1, ["kettlebrook", "moor", "harbor"], 5, holders=2)
    assert index.words == [["kettlebrook", "moor"]]
    assert index.options[0]["holders"] == 2


@pytest.mark.parametrize(("given", "asked"), [(0, 0), (1, 1), (2, 1), (5, 4)])
def test_a_big_room_asks_a_group_fewer_but_never_none_of_those_given(templated_room, given, asked):
    groups = candidates.query_groups(1, RARE_WORDS, given)
    assert len(groups) == asked


@pytest.mark.django_db
def test_a_sample_leaves_out_the_word_its_characters_cut(dedup_settings, monkeypatch):
    monkeypatch.setattr(room_words, "COMMON_WORDS_LEFT_OUT", room_words.MIN_SAMPLE_DRAWERS)
    room = services.room_get_or_create(wing="ops", room="cut")
    long = "pump " * (room_words.SAMPLED_CHARACTERS // 5 - 1) + "kettlebrook harbor"
    assert long[: room_words.SAMPLED_CHARACTERS].endswith(" kettl")  # the cut
    texts = [f"station{n} report" for n in range(room_words.MIN_SAMPLE_DRAWERS)] + [long]
    bulk_drawers(room, texts)
    room_words.forget()
    found = room_words.sample(room.id)
    assert "station7" in found.once
    assert "kettl" not in found.once


@pytest.mark.django_db
def test_a_sample_reads_an_index_text_as_far_as_its_text_s_characters(dedup_settings, monkeypatch):
    """A Korean text's index text holds its words' pairs too: twice as long, it is read as far
    as SAMPLED_CHARACTERS of the text, not of itself (the review found a Korean room's sample
    held the first half of each drawer's words)."""
    monkeypatch.setattr(room_words, "COMMON_WORDS_LEFT_OUT", room_words.MIN_SAMPLE_DRAWERS)
    room = services.room_get_or_create(wing="ops", room="korean")
    syllables = "가나다라마바사아자차카타파하"
    words = [f"{a}{b}{c}" for a in syllables for b in syllables for c in "는를"]
    long = " ".join(words[: room_words.SAMPLED_CHARACTERS // 4 - 2]) + " 강릉에서 바다를"
    indexed = policy.index_text(policy.normalize_text(long))
    assert len(long) < room_words.SAMPLED_CHARACTERS < indexed.index("강릉에서")
    texts = [f"station{n} report" for n in range(room_words.MIN_SAMPLE_DRAWERS)] + [long]
    (*_, last) = bulk_drawers(room, texts)
    Drawer.objects.filter(pk=last.pk).update(index_text=indexed)
    room_words.forget()
    found = room_words.sample(room.id)
    assert "강릉에서" in found.once


@pytest.mark.django_db
def test_the_index_is_asked_many_words_in_statements_of_a_few_hundred(dedup_settings):
    room = services.room_get_or_create(wing="ops", room="many")
    held = [f"word{n}" for n in range(0, 700, 3)]
    services.drawer_write(room=room, content=" ".join(held))
    words = [f"word{n}" for n in range(700)]  # SQLite allows 500 SELECTs in one statement
    assert len(words) > candidates.drawers.SQLITE_WORDS_ASKED
    assert candidates.words_in_room(room.id, words) == set(held)


@pytest.mark.django_db
def test_the_index_is_asked_after_the_writer_s_lock(dedup_settings):
    """On PostgreSQL `castellan_words_held` takes the lock it is given (held to commit)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers from their transaction's start")
    room = services.room_get_or_create(wing="ops", room="lock")
    key = 424242
    with transaction.atomic():
        candidates.words_in_room(room.id, ["kettlebrook"], lock=key)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                "AND pid = pg_backend_pid() AND classid = 0 AND objid = %s AND granted",
                [key],
            )
            assert cursor.fetchone()[0] == 1
