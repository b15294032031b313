"""A sweep asks its candidates a batch at a time (`dedup.candidates.sweep_batch`): for every
drawer, exactly the candidates the write path's query finds for it alone, in the same order, on
both databases: from the room held in memory, or, for a room too big to hold, of the database
(on PostgreSQL in one call per batch, of the function the migration installed). In a room of
100,000 drawers or more, but for the words its groups leave out: those fewer than two drawers
hold (the last test)."""

import importlib
import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dedup import candidates, policy
from dedup.candidates import room_words, sweep_batch, sweep_rooms
from dedup.candidates.sweep_rooms import Rooms
from dedup.policy import text as policy_text
from dedup.services import candidates_for_text
from dedup.services import rooms as room_services
from palace import fulltext
from palace.models import Drawer
from tests.dedup.drawers_data import spy_index

pytestmark = pytest.mark.django_db
GROUPS = candidates.SWEEP_LEXICAL_GROUPS
# A small vocabulary: word pairs recur, so many groups reach their bound (GROUP_MATCHES) and rank
# after the rare ones, as a room's template words do.
WORDS = [f"{a}{b}" for a in ("ka", "lo", "ri", "men", "tas") for b in ("vor", "il", "de", "nus")]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."


def typo(text: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(text) - 2)
    return text[:at] + text[at + 1] + text[at] + text[at + 2 :]


def texts(rng: random.Random, count: int) -> list[str]:
    """Sentences, typo variants and copies (exact and by normalised text) of earlier ones, and
    texts too short to be near anything."""
    made: list[str] = []
    for index in range(count):
        roll = rng.random()
        if index > 5 and roll < 0.15:
            made.append(typo(rng.choice(made), rng))
        elif index > 5 and roll < 0.2:
            made.append(rng.choice(made))
        elif index > 5 and roll < 0.25:
            made.append(rng.choice(made).upper())
        elif roll < 0.3:
            made.append(rng.choice(["Ok.", "Yes", "kavor"]))
        else:
            made.append(sentence(rng))
    return made


def store(room, contents: list[str], agent: str = "") -> list[Drawer]:
    rows = []
    for content in contents:
        derived = policy.Text.of(content)
        rows.append(
            Drawer(
                room=room,
                content=content,
                content_hash=derived.content_hash,
                normalized_content=derived.normalized,
                fingerprint=derived.fingerprint,
                agent=agent,
            )
        )
    return Drawer.objects.bulk_create(rows)


def ids(found: candidates.Found) -> tuple[list[int], list[int]]:
    return [c.id for c in found.same], [c.id for c in found.lexical]


def one_by_one(scope: candidates.Scope, drawer: Drawer) -> tuple[list[int], list[int]]:
    alone = candidates.Scope(room=scope.room, agent=scope.agent, exclude_id=drawer.pk)
    text = policy.Text(drawer.content_hash, drawer.normalized_content, drawer.fingerprint)
    return ids(candidates_for_text(alone, text, threshold=0.9, groups=GROUPS))


def batched(
    scope: candidates.Scope, drawers: list[Drawer], size: int, rooms: Rooms | None = None
) -> dict[int, tuple]:
    result: dict[int, tuple] = {}
    for start in range(0, len(drawers), size):
        queries = [
            sweep_batch.query_of(
                d.pk,
                policy.Text(d.content_hash, d.normalized_content, d.fingerprint),
                0.9,
            )
            for d in drawers[start : start + size]
        ]
        for pk, found in sweep_batch.for_texts(scope, queries, groups=GROUPS, rooms=rooms).items():
            result[pk] = ids(found)
    return result


@pytest.fixture
def room():
    room_words.forget()
    room = room_services.room_get_or_create(wing="ops", room="batch")
    drawers = store(room, texts(random.Random(5), 400))
    superseded = [d.pk for d in drawers[10:400:37]]
    Drawer.objects.filter(pk__in=superseded).update(valid_to=timezone.now())
    yield room
    room_words.forget()


def test_a_batch_finds_what_each_drawer_s_own_query_finds(room):
    scope = candidates.Scope(room=room)
    drawers = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert sum(len(lexical) for _, lexical in expected.values()) > 0
    assert any(same for same, _ in expected.values())
    for size in (1, 7, 200):  # a batch of one, batches cut anywhere, the sweep's batch
        assert batched(scope, drawers, size) == expected, size


def test_in_a_diary_each_agent_s_drawers_find_only_theirs():
    room_words.forget()
    diary = room_services.room_get_or_create(wing="agents", room="diary")
    rng = random.Random(8)
    for agent in ("alice", "bob"):
        store(diary, texts(rng, 60), agent=agent)
    for agent in ("alice", "bob"):
        scope = candidates.Scope(room=diary, agent=agent)
        drawers = list(scope.drawers().order_by("pk"))
        expected = {d.pk: one_by_one(scope, d) for d in drawers}
        assert batched(scope, drawers, 25) == expected
        index = Rooms().get(diary.pk, agent)
        assert index is not None
        held = {row.agent for row in index.rows.values()}
        # PostgreSQL's lookups keep the agent's drawers before their bound: only those are held.
        assert held == ({agent} if connection.vendor == "postgresql" else {"alice", "bob"})
    room_words.forget()


def test_a_room_held_in_memory_asks_no_full_text_lookup(room):
    drawers = list(candidates.Scope(room=room).drawers().order_by("pk"))
    batched(candidates.Scope(room=room), drawers, 1)  # the room's common words sampled
    with CaptureQueriesContext(connection) as queries:
        batched(candidates.Scope(room=room), drawers, 200, Rooms())
    sql = [query["sql"] for query in queries.captured_queries]
    assert len(sql) == 3  # the room's version and the room, then the second batch's version
    assert not [each for each in sql if "palace_drawer_fts" in each or "tsquery" in each]


def test_a_part_s_room_is_read_again_when_it_changes(room):
    scope = candidates.Scope(room=room)
    rooms = Rooms()
    drawers = list(scope.drawers().order_by("pk"))
    batched(scope, drawers, 200, rooms)
    Drawer.objects.filter(pk__in=[d.pk for d in drawers[5::11]]).update(valid_to=timezone.now())
    store(room, texts(random.Random(6), 30))
    room_words.forget()  # a fresh sample for both (it is kept for REFRESH_WRITES lookups)
    drawers = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert batched(scope, drawers, 200, rooms) == expected


def test_a_drawer_made_current_again_as_another_is_superseded_is_seen(room):
    """Between two batches one drawer is superseded and a superseded one made current again: the
    room's count, ids and superseded count are unchanged, its current ids are not."""
    scope = candidates.Scope(room=room)
    rooms = Rooms()
    drawers = list(Drawer.objects.filter(room=room).order_by("pk"))
    batched(scope, list(scope.drawers().order_by("pk")), 200, rooms)
    superseded = next(d for d in drawers if d.valid_to is not None)
    current = next(d for d in reversed(drawers) if d.valid_to is None)
    Drawer.objects.filter(pk=superseded.pk).update(valid_to=None)
    Drawer.objects.filter(pk=current.pk).update(valid_to=timezone.now())
    room_words.forget()
    now = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in now}
    assert batched(scope, now, 200, rooms) == expected


def test_a_room_of_more_text_than_the_bound_is_asked_of_the_index(room, monkeypatch):
    monkeypatch.setattr(sweep_rooms, "MAX_CHARACTERS", 1_000)
    assert sweep_rooms.RoomIndex.load(room.pk) is None
    scope = candidates.Scope(room=room)
    drawers = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert batched(scope, drawers, 200, Rooms()) == expected


def test_any_script_s_words_are_answered_in_memory():
    room = room_services.room_get_or_create(wing="ops", room="scripts")
    rng = random.Random(9)
    accented = [f"{text} café crème résumé naïve" for text in texts(rng, 40)]
    scripts = ["Привет мир kavor lovor", "नमस्ते दुनिया kavor lovor", "snake_case words here"]
    store(room, [*texts(rng, 40), *accented, *scripts, *[t + " Привет мир" for t in scripts]])
    scope = candidates.Scope(room=room)
    drawers = list(scope.drawers().order_by("pk"))
    assert sweep_rooms.RoomIndex.load(room.pk) is not None
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert batched(scope, drawers, 50, Rooms()) == expected


def test_words_past_what_the_index_holds_are_not_found_in_memory_either():
    """PostgreSQL indexes a text's first 100,000 characters and words of at most 2,000 bytes;
    the room in memory holds the same words (on SQLite, every word)."""
    room = room_services.room_get_or_create(wing="ops", room="long")
    rng = random.Random(10)
    filler = " ".join(rng.choice(WORDS) for _ in range(20_000))[:100_000]
    tail = "zeppelin quorra vantablack ultramarine"
    long_word = "ж" * 1_500  # 3,000 bytes
    store(
        room,
        [
            f"{filler} {tail}",
            f"{long_word} {tail} kavor",
            *[f"{tail} {sentence(rng)}" for _ in range(20)],
            *texts(rng, 30),
        ],
    )
    scope = candidates.Scope(room=room)
    drawers = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert batched(scope, drawers, 50, Rooms()) == expected
    words = fulltext.indexed_words(drawers[0].normalized_content, connection.vendor)
    assert ("zeppelin" in words) == (connection.vendor == "sqlite")


def test_a_room_over_the_bound_is_asked_of_the_index(room, monkeypatch):
    monkeypatch.setattr(sweep_rooms, "MAX_DRAWERS", 100)
    assert sweep_rooms.RoomIndex.load(room.pk) is None
    rooms = Rooms()
    with CaptureQueriesContext(connection) as queries:
        assert rooms.get(room.pk) is None
        assert rooms.get(room.pk) is None  # the part's next batch: not counted again
    assert len(queries.captured_queries) == 1  # its count said so: none of its rows read


def test_an_empty_batch_asks_nothing(room):
    with CaptureQueriesContext(connection) as queries:
        assert sweep_batch.for_texts(candidates.Scope(room=room), [], groups=GROUPS) == {}
    assert len(queries.captured_queries) == 0


def test_a_room_over_the_bound_finds_what_each_drawer_s_own_query_finds(room, monkeypatch):
    monkeypatch.setattr(sweep_rooms, "MAX_DRAWERS", 100)
    scope = candidates.Scope(room=room)
    drawers = list(scope.drawers().order_by("pk"))
    expected = {d.pk: one_by_one(scope, d) for d in drawers}
    assert batched(scope, drawers, 200, Rooms()) == expected


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL")
def test_on_postgresql_a_batch_of_a_room_over_the_bound_is_one_call(room, monkeypatch):
    monkeypatch.setattr(sweep_rooms, "MAX_DRAWERS", 100)
    drawers = list(candidates.Scope(room=room).drawers().order_by("pk")[:50])
    batched(candidates.Scope(room=room), drawers, 1)  # the room's common words sampled
    with CaptureQueriesContext(connection) as queries:
        batched(candidates.Scope(room=room), drawers, 50, Rooms())
    calls = [q["sql"] for q in queries.captured_queries if "palace_drawer" not in q["sql"]]
    assert len(calls) == 1
    assert sweep_batch.POSTGRESQL_BATCH_FUNCTION_NAME in calls[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL")
def test_the_installed_function_is_the_code_s():
    name = sweep_batch.POSTGRESQL_BATCH_FUNCTION_NAME
    query = "SELECT pg_get_functiondef(oid) FROM pg_proc WHERE proname = %s"
    with connection.cursor() as cursor:
        cursor.execute(query, [name])
        installed = cursor.fetchall()
        cursor.execute("SAVEPOINT reinstall")
        cursor.execute(sweep_batch.POSTGRESQL_BATCH_FUNCTION)
        cursor.execute(query, [name])
        expected = cursor.fetchall()
        cursor.execute("ROLLBACK TO SAVEPOINT reinstall")
    assert installed == expected


def test_the_migration_holds_the_code_s_function_text():
    migration = importlib.import_module("dedup.migrations.0016_index_text")
    assert migration.SWEEP_FUNCTION == sweep_batch.POSTGRESQL_BATCH_FUNCTION
    assert migration.WITHOUT_JIT.SWEEP_REMOVE == sweep_batch.POSTGRESQL_BATCH_FUNCTION_REMOVE


def test_a_big_room_s_batch_asks_the_index_once_which_words_other_drawers_hold(monkeypatch):
    """In a room of COMMON_WORDS_LEFT_OUT drawers or more the groups hold only words the room
    holds besides the text's own drawer: one lookup for the whole batch, and a variant's typo
    (held by the variant alone) is in none of its groups, so they find its original."""
    room_words.forget()
    room = room_services.room_get_or_create(wing="ops", room="big")
    original, variant, other = store(
        room,
        [
            "Kettlebrook lanternfish moonstruck harbor ledger quarry.",
            "Kettlebrook lanternfysh moonstruck harbor ledger quarry.",
            "Meadowlark quarry saltmarsh.",
        ],
    )
    big = room_words.Sample(sampled=room_words.SAMPLE_DRAWERS, drawers=1_000_000)
    monkeypatch.setattr(room_words, "sample", lambda room_id: big)
    monkeypatch.setattr(room_words, "peek", lambda room_id: big)
    index = spy_index(monkeypatch)
    groups_asked = []
    query_groups = sweep_batch.query_groups

    def groups_spy(*args, **options):
        made = query_groups(*args, **options)
        groups_asked.extend(made)
        return made

    monkeypatch.setattr(sweep_batch, "query_groups", groups_spy)
    scope = candidates.Scope(room=room)
    found = batched(scope, [original, variant, other], 200)
    assert index.options == [{"holders": 2}]
    words = {word for group in groups_asked for word in group}
    assert "lanternfysh" not in words  # the variant's alone
    assert "kettlebrook" in words  # the original's and the variant's
    assert original.pk in found[variant.pk][1]
    assert variant.pk in found[original.pk][1]
    room_words.forget()


def test_a_big_room_s_batch_keeps_a_word_past_what_the_index_holds_of_its_own_drawer(
    monkeypatch,
):
    """On PostgreSQL a drawer's index entry holds the words of its first 100,000 characters
    only: a word past them, which one other drawer holds, is still the room's, and its group
    finds that drawer (counting the drawer itself as a holder would leave it out)."""
    room_words.forget()
    room = room_services.room_get_or_create(wing="ops", room="big-long")
    rng = random.Random(11)
    filler = " ".join(rng.choice(WORDS) for _ in range(20_000))[
        : fulltext.POSTGRESQL_MAX_CHARACTERS
    ]
    tail = "zeppelinquorrax vantablackish"
    long_one, other = store(room, [f"{filler} {tail}", f"{tail} {filler[::-1]}"])
    big = room_words.Sample(sampled=room_words.SAMPLE_DRAWERS, drawers=1_000_000)
    monkeypatch.setattr(room_words, "sample", lambda room_id: big)
    monkeypatch.setattr(room_words, "peek", lambda room_id: big)
    groups_asked: dict[tuple, list] = {}
    query_groups = sweep_batch.query_groups

    def groups_spy(room_id, words, *args, **options):
        made = query_groups(room_id, words, *args, **options)
        groups_asked[tuple(words)] = made
        return made

    monkeypatch.setattr(sweep_batch, "query_groups", groups_spy)
    index = spy_index(monkeypatch)
    found = batched(candidates.Scope(room=room), [long_one, other], 200)
    own_words = tuple(policy.query_words_of_normalized(long_one.normalized_content))
    assert ["zeppelinquorrax", "vantablackish"] in groups_asked[own_words]
    assert other.pk in found[long_one.pk][1]
    past_the_cut = ["vantablackish", "zeppelinquorrax"]
    asked_again = [(past_the_cut, {})] if connection.vendor == "postgresql" else []
    assert index.calls[1:] == asked_again  # after the batch's one lookup (holders 2)
    room_words.forget()


def test_on_postgresql_a_query_knows_the_words_past_what_the_index_holds_of_its_text():
    filler = "kavor " * (fulltext.POSTGRESQL_MAX_CHARACTERS // 6 + 1)
    text = policy.Text.of(f"{filler} zeppelinquorrax")
    unindexed = sweep_batch.query_of(1, text, 0.9).unindexed
    expected = {"zeppelinquorrax"} if connection.vendor == "postgresql" else set()
    assert unindexed == expected
    short = sweep_batch.query_of(2, policy.Text.of("kavor zeppelinquorrax"), 0.9)
    assert short.unindexed == frozenset()


def test_a_query_word_is_never_longer_than_the_index_keeps_a_word():
    """So only the cut of a long text leaves a query word out of its drawer's index entry
    (`sweep_batch.Query.unindexed`): UTF-8 holds a character in at most four bytes."""
    assert policy_text.QUERY_WORD_MAX_CHARS * 4 <= fulltext.POSTGRESQL_MAX_WORD_BYTES
