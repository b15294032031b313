"""The write path as a service: what the API, the admin and the commands all call."""

import pytest
from django.db import connection

from dedup import candidates, services
from dedup.errors import EmptyLabel, InvalidInput, NotFound
from palace.models import AuditEntry, Drawer, DrawerLink, Entity, EntityLink

pytestmark = pytest.mark.django_db

TEXT = "The deploy script must run database migrations before restarting the web workers."


@pytest.fixture
def room(dedup_settings):
    return services.room_get_or_create(wing="ops", room="runbooks")


def test_a_drawer_is_never_its_own_candidate(room):
    drawer = services.drawer_write(room=room, content=TEXT).drawer
    scope = candidates.Scope(room=room, exclude_id=drawer.id)
    assert candidates.same_hash(scope, drawer.content_hash) == []
    assert candidates.lexical(scope, ["deploy", "migrations", "restarting"]) == []


def test_candidates_never_cross_rooms_or_agents_diaries(room):
    other = services.room_get_or_create(wing="ops", room="elsewhere")
    services.drawer_write(room=other, content=TEXT)
    services.drawer_write(room=room, content=TEXT, mode=services.WriteMode.DIARY, agent="alice")
    bob = candidates.Scope(room=room, agent="bob")
    assert candidates.same_hash(bob, services.policy.content_hash(TEXT)) == []
    assert candidates.lexical(bob, ["deploy", "migrations"]) == []


def test_lexical_query_finds_a_typo_through_unbroken_words(room):
    original = services.drawer_write(room=room, content=TEXT).drawer
    for n in range(30):
        services.drawer_write(
            room=room, content=f"Unrelated note {n} about lunch menus and holidays."
        )
    typo = TEXT.replace("migrations", "migratoins")
    found = candidates.lexical(candidates.Scope(room=room), services.policy.query_words(typo))
    assert found[0].id == original.id


def test_lexical_candidates_keep_to_the_length_band(room):
    short = services.drawer_write(room=room, content="Migrations first, deploy the workers.").drawer
    original = services.drawer_write(room=room, content=TEXT).drawer
    scope, words = candidates.Scope(room=room), services.policy.query_words(TEXT)

    def found(lengths):
        return {c.id for c in candidates.for_text(scope, "", None, words, lengths=lengths).lexical}

    length = len(original.normalized_content)
    assert found(candidates.ANY_LENGTH) == {short.id, original.id}
    assert found(candidates.LengthBand(length, length, 10_000)) == {original.id}
    assert found(candidates.LengthBand(length + 1, 10_000, 10_000)) == set()
    # Beyond `any_over`, any length is a candidate (edit distance gives way to trigrams there).
    assert found(candidates.LengthBand(1, 2, len(short.normalized_content) - 1)) == {
        short.id,
        original.id,
    }


def test_write_path_asks_only_for_lengths_that_can_be_near(room, monkeypatch):
    asked = []
    real_for_text = candidates.for_text
    monkeypatch.setattr(
        candidates, "for_text", lambda *a, **kw: asked.append(kw) or real_for_text(*a, **kw)
    )
    services.drawer_write(room=room, content="x" * 20 + " and more")  # 29 normalised characters
    assert asked[-1]["lengths"] == candidates.LengthBand(
        27, 32, services.policy.EDIT_DISTANCE_LIMIT
    )
    services.drawer_write(room=room, content="y" * 2001)
    assert asked[-1]["lengths"] == candidates.LengthBand(0, candidates.ANY_LENGTH.high, 2000)


def test_common_word_pairs_elsewhere_do_not_crowd_out_the_original(room):
    """More drawers than a query ranks share one pair of the text's words, newer and in another
    room: the original, sharing every pair its typo left intact, still ranks first."""
    original = services.drawer_write(room=room, content=TEXT).drawer
    other = services.room_get_or_create(wing="ops", room="elsewhere")
    crowd = [
        f"Deploy the migrations with care, ticket {n}."  # the pair (migrations, deploy)
        for n in range(candidates.SQLITE_RANKED_MATCHES + 10)
    ]
    Drawer.objects.bulk_create(
        Drawer(
            room=other,
            content=text,
            content_hash=services.policy.content_hash(text),
            normalized_content=services.policy.normalize_text(text),
        )
        for text in crowd
    )
    typo = TEXT.replace("restarting", "restartign")
    found = candidates.lexical(candidates.Scope(room=room), services.policy.query_words(typo))
    assert [c.id for c in found] == [original.id]


def test_lexical_groups_split_long_words_so_one_typo_breaks_one_group():
    words = [f"word{n:02d}" for n in range(14)]
    # The write path: the ten first words in five pairs. Every word is in exactly one group, so
    # four broken words leave one intact.
    assert candidates.lexical_groups(words) == [
        ["word00", "word05"],
        ["word01", "word06"],
        ["word02", "word07"],
        ["word03", "word08"],
        ["word04", "word09"],
    ]
    # Sweeps: the twelve first in six pairs, so five broken words leave one.
    assert candidates.lexical_groups(words, candidates.SWEEP_LEXICAL_GROUPS) == [
        ["word00", "word06"],
        ["word01", "word07"],
        ["word02", "word08"],
        ["word03", "word09"],
        ["word04", "word10"],
        ["word05", "word11"],
    ]
    assert candidates.lexical_groups(["alpha", "beta"]) == [["alpha"], ["beta"]]
    assert candidates.lexical_groups(["a1", "b2", "c3"]) == [["a1", "c3"], ["b2"]]
    assert candidates.lexical_groups(["a1", "b2", "c3", "d4"]) == [["a1", "c3"], ["b2", "d4"]]
    assert candidates.lexical_groups([]) == []


def test_pieces_of_unspaced_runs_are_asked_alone_or_with_their_neighbours():
    """One edit breaks one to three neighbouring pieces of a run (`policy.index_text`): a few
    pieces are groups alone; more are paired with the next one in the text, so a broken stretch
    breaks at most two pairs."""
    few = ["东京塔下", "看夜景的", "朋友们"]
    assert candidates.lexical_groups(few) == [["东京塔下"], ["看夜景的"], ["朋友们"]]
    many = [f"{n}号楼" for n in "一二三四五六七八九十"]  # in text order
    assert candidates.lexical_groups(many) == [many[i : i + 2] for i in range(0, 10, 2)]
    # Beside a word of a spaced script, the pairs are the usual ones.
    assert candidates.lexical_groups(["postgresql", *few]) == [
        ["postgresql", "看夜景的"],
        ["东京塔下", "朋友们"],
    ]


def test_stop_words_are_never_query_words():
    words = candidates.lexical_words(["because", "migrations", "their", "deploy"])
    assert words == ["migrations", "deploy"]


def test_short_text_skips_the_lexical_query(room, django_assert_num_queries, monkeypatch):
    queried = []

    def for_text(scope, content_hash, fingerprint, words, **options):
        queried.append(options.get("word_groups") or list(words))
        return real_for_text(scope, content_hash, fingerprint, words, **options)

    real_for_text = candidates.for_text
    monkeypatch.setattr(candidates, "for_text", for_text)
    services.drawer_write(room=room, content="Use cat.")
    candidates.common_words(room.id)  # sampled once per many writes (room_words.REFRESH_WRITES)
    # savepoint, hash and fingerprint lookup (with the lock), insert, release.
    with django_assert_num_queries(4):
        services.drawer_write(room=room, content="Use car.")
    with django_assert_num_queries(4):
        services.drawer_write(room=room, content="Use a longer sentence about carrots here.")
    # A room too small to sample: the longest words paired, stop words ("about", "here") left out.
    assert queried[1:] == [[], [["sentence", "longer"], ["carrots", "use"]]]


def test_write_cost_is_bounded_whatever_the_room_size(room, django_assert_num_queries):
    for n in range(40):
        services.drawer_write(room=room, content=f"{TEXT} Variant number {n}.")
    candidates.common_words(room.id)  # sampled once per many writes (room_words.REFRESH_WRITES)
    # savepoint, the lock and every candidate in one round trip, the insert with its links (one
    # round trip on PostgreSQL; SQLite runs one statement at a time), release.
    with django_assert_num_queries(4 if connection.vendor == "postgresql" else 5):
        result = services.drawer_write(room=room, content=f"{TEXT} Variant number 41!")
    assert len(result.links) == services.MAX_LINKS_PER_WRITE


def assert_fields_equal(stored: Drawer, returned: Drawer) -> None:
    """The drawer a write returned holds, field by field, what the database stored."""
    for field in Drawer._meta.concrete_fields:
        assert getattr(stored, field.attname) == getattr(returned, field.attname), field


def test_drawer_and_links_returned_by_a_write_are_the_stored_rows(room):
    older = [services.drawer_write(room=room, content=f"{TEXT} Variant {n}.").drawer for n in "ab"]
    result = services.drawer_write(
        room=room, content=f"{TEXT} Variant c.", kind="fact", agent="ada", source={"file": "x"}
    )
    stored = Drawer.objects.get(uuid=result.drawer.uuid)
    assert stored.pk == result.drawer.pk
    assert not result.drawer._state.adding
    assert_fields_equal(stored, result.drawer)
    assert (stored.kind, stored.agent, stored.source) == ("fact", "ada", {"file": "x"})
    assert {link.older_id for link in result.links} == {drawer.pk for drawer in older}
    for link in result.links:
        stored = DrawerLink.objects.get(pk=link.pk)
        assert not link._state.adding
        assert (stored.newer_id, stored.older_id, stored.verdict, stored.status) == (
            result.drawer.pk,
            link.older_id,
            link.verdict,
            DrawerLink.Status.OPEN,
        )
        assert stored.similarity == link.similarity
        assert stored.signals == link.signals
        assert stored.signals["threshold"] == 0.9
        assert stored.created_at == link.created_at


def test_replayed_write_adds_no_reverse_link(room):
    first = services.drawer_write(room=room, content=TEXT)
    second = services.drawer_write(room=room, content=TEXT.upper())
    again = services.drawer_write(room=room, content=TEXT.upper(), drawer_id=second.drawer.uuid)
    assert again.drawer == second.drawer
    assert again.links == ()
    assert list(DrawerLink.objects.values_list("newer", "older")) == [
        (second.drawer.id, first.drawer.id)
    ]


def test_link_is_idempotent_and_always_newer_to_older(room):
    old = services.drawer_write(room=room, content=TEXT, mode=services.WriteMode.MINED).drawer
    new = services.drawer_write(room=room, content="A different text about cats and dogs.").drawer
    link, created = services.drawer_link(
        newer=old, older=new, verdict="near", signals={"similarity": 0.91}
    )
    assert created
    assert (link.newer, link.older) == (new, old)
    _, created_again = services.drawer_link(newer=new, older=old, verdict="near", signals={})
    assert not created_again
    assert DrawerLink.objects.count() == 1
    with pytest.raises(InvalidInput):
        services.drawer_link(newer=old, older=old, verdict="near", signals={})


def test_exact_copy_returns_the_oldest_copy(room):
    first = services.drawer_write(room=room, content=TEXT, mode=services.WriteMode.MINED).drawer
    services.drawer_write(room=room, content=TEXT, mode=services.WriteMode.MINED)
    result = services.drawer_write(room=room, content=TEXT)
    assert not result.created
    assert result.drawer == first
    assert result.duplicate_of == first


def test_an_exact_copy_gone_before_it_is_held_leaves_the_text_stored(room, monkeypatch):
    """The candidates held an exact copy, which a delete then took before the write could hold
    it: the write stores the text after all, and the memory is kept."""
    original = services.drawer_write(room=room, content=TEXT).drawer
    monkeypatch.setattr(services.drawers, "drawer_held", lambda drawer_id: None)
    result = services.drawer_write(room=room, content=TEXT)
    assert result.created
    assert result.drawer.pk != original.pk
    assert Drawer.objects.filter(room=room, content_hash=original.content_hash).count() == 2


def test_a_write_that_links_nothing_stores_the_row_the_orm_would(room):
    """The drawer inserted by hand, without links, holds what the ORM's save() would have
    stored, field by field."""
    result = services.drawer_write(
        room=room, content=TEXT, kind="fact", agent="ada", source={"file": "x", "n": [1, 2]}
    )
    assert result.links == ()
    stored = Drawer.objects.get(pk=result.drawer.pk)
    assert_fields_equal(stored, result.drawer)
    assert (stored.kind, stored.agent, stored.source) == ("fact", "ada", {"file": "x", "n": [1, 2]})


def test_a_full_width_twin_is_stored_and_linked_as_the_same_words(room):
    """An input method's full-width letters and digits are the same words, not an exact copy:
    the twin is stored verbatim and linked "normalized" to the text it repeats."""
    original = services.drawer_write(room=room, content="AWSのS3バケットにログを保存する").drawer
    twin = services.drawer_write(room=room, content="ＡＷＳのＳ３バケットにログを保存する")
    assert twin.created
    assert [(link.older_id, link.verdict) for link in twin.links] == [(original.pk, "normalized")]


def test_diary_needs_an_agent(room):
    with pytest.raises(InvalidInput):
        services.drawer_write(room=room, content=TEXT, mode=services.WriteMode.DIARY)
    assert not Drawer.objects.exists()


def test_content_is_stored_verbatim(room):
    raw = "  Spaces\tand\r\nline ends — kept exactly.  "
    drawer = services.drawer_write(room=room, content=raw).drawer
    drawer.refresh_from_db()
    assert drawer.content == raw


def test_entity_link_per_resemblance_and_no_merge(dedup_settings):
    services.entity_resolve(name="Johnson", kind="person")
    # One edit from Johnson, Johnsen would converge on it: it predates fuzzy matching here.
    strict = services.DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    services.entity_resolve(name="Johnsen", kind="person", config=strict)
    result = services.entity_resolve(name="Johnsin", kind="person")
    assert result.created
    assert result.rule == "distinct"
    assert sorted(link.older.name for link in result.possible) == ["Johnsen", "Johnson"]
    assert Entity.objects.count() == 3
    assert EntityLink.objects.filter(newer=result.entity).count() == 2


def test_resolving_again_changes_nothing(dedup_settings):
    services.entity_resolve(name="SurrealDB", kind="tool")
    services.entity_resolve(name="surrealdb", kind="tool")
    services.entity_resolve(name="surrealdb", kind="tool")
    entity = Entity.objects.get()
    assert list(entity.alias_set.values_list("alias", flat=True)) == ["surrealdb"]


def test_entity_key_and_length_are_stored(dedup_settings):
    entity = services.entity_resolve(name="Node.js", kind="tool").entity
    assert (entity.key, entity.key_length) == ("nodejs", 6)


def test_alias_add_unknown_blank(dedup_settings):
    entity = services.entity_resolve(name="MemCastle", kind="project").entity
    with pytest.raises(EmptyLabel):
        services.entity_alias_add(entity=entity, alias="   ")
    assert not AuditEntry.objects.exists()


def test_linking_a_drawer_deleted_meanwhile_is_not_found_and_links_nothing(room):
    older = services.drawer_write(room=room, content=TEXT).drawer
    newer = services.drawer_write(room=room, content="Another note about lunch menus.").drawer
    Drawer.objects.filter(pk=older.pk).delete()
    with pytest.raises(NotFound):
        services.drawer_link(newer=newer, older=older, verdict="near", signals={})
    assert DrawerLink.objects.count() == 0
