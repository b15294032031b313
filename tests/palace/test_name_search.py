"""`?name=` finds entities by a piece of their name or alias from trigram indexes (palace 0018),
and finds exactly what the scan by `icontains` finds, on each database."""

import random

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from palace import name_search, selectors
from palace.models import Entity, EntityAlias

pytestmark = pytest.mark.django_db

ADVERSARIAL = [
    "Ada Lovelace",
    "ADA LOVELACE the second",
    "ada",
    "Ab",
    "x",
    "Grace Hopper",
    "Élan Vital",
    "élan vital",
    "Straße",
    "STRASSE",
    "Ærøskøbing",
    "東京タワー",
    "서울 타워",
    "Москва",
    "МОСКВА-Сити",
    "100% Pure",
    "snake_case_tool",
    "snakeXcaseXtool",
    "back\\slash",
    'quote\'s "name"',
    "aaaaaaa",
    "aaaa",
    "abcabcabc",
    "tab\tand  spaces",
]
QUERIES = [
    "love",
    "LOVE",
    "ada",
    "a",
    "ab",
    "Ab",
    "aaa",
    "aaaaa",
    "cab",
    "élan",
    "ÉLAN",
    "lan v",
    "straße",
    "ss",
    "タワー",
    "京",
    "моск",
    "МОСК",
    "0%",
    "%",
    "_",
    "e_c",
    "snake_",
    "\\",
    "h\\s",
    "'s \"",
    "  ",
    "zzz",
    "ersecond",
]


def found(text: str) -> set[str]:
    return set(
        Entity.objects.filter(name_search.entities_named_like(text)).values_list("name", flat=True)
    )


def scanned(text: str) -> set[str]:
    """The answer the search had before its index: `icontains` on the name or an alias."""
    matching = Entity.objects.filter(
        Q(name__icontains=text) | Q(alias_set__alias__icontains=text)
    ).distinct()
    return set(matching.values_list("name", flat=True))


def entity(name: str, *aliases: str) -> Entity:
    made = Entity.objects.create(name=name, kind="tool", key=name.casefold())
    for alias in aliases:
        EntityAlias.objects.create(entity=made, alias=alias, key=alias.casefold())
    return made


@pytest.fixture(params=["rare", "common"])
def probe(request, monkeypatch):
    """Each search as the index answers a rare piece, then with every piece deemed common
    (more than three ids): the other way `entities_named_like` answers."""
    if request.param == "common":
        monkeypatch.setattr(name_search, "PROBE", 3)
    return request.param


def test_the_index_finds_what_the_scan_finds_on_adversarial_names(probe):
    for number, name in enumerate(ADVERSARIAL):
        # Every other entity also answers for a spelling of its own, found through the alias.
        entity(name, *([f"alias {number} of {name}"] if number % 2 else []))
    for text in QUERIES:
        assert found(text) == scanned(text), text


def test_the_index_finds_what_the_scan_finds_on_random_names(probe):
    rng = random.Random(18)
    letters = "abcdeéßxyzAÉZ _%ż東"
    names = {"".join(rng.choices(letters, k=rng.randint(1, 12))) for _ in range(600)}
    for name in names:
        entity(name, *([name[::-1] + "!"] if rng.random() < 0.3 else []))
    texts = [
        *("".join(rng.choices(letters, k=rng.randint(1, 5))) for _ in range(300)),
        *(name[start : start + 4] for name in list(names)[:100] for start in (0, 3)),
    ]
    for text in texts:
        assert found(text) == scanned(text), text


def test_renamed_and_deleted_entities_and_aliases_are_found_as_they_are_now(probe):
    ada = entity("Ada Lovelace", "Countess of Lovelace")
    grace = entity("Grace Hopper", "Amazing Grace")
    Entity.objects.filter(pk=ada.pk).update(name="Augusta King")
    assert found("lovelace") == {"Augusta King"}  # by its alias still
    assert found("augusta") == {"Augusta King"}
    EntityAlias.objects.filter(entity=ada).update(alias="Enchantress of Numbers")
    assert found("lovelace") == set()
    assert found("enchant") == {"Augusta King"}
    EntityAlias.objects.filter(entity=grace).delete()
    assert found("amazing") == set()
    grace.delete()
    assert found("hopper") == set()
    assert found("a") == scanned("a") == {"Augusta King"}


def test_an_entity_whose_id_changes_is_found_by_its_new_id(probe):
    moved = entity("Moved Entity")
    Entity.objects.filter(pk=moved.pk).update(id=moved.pk + 1000)
    assert set(
        Entity.objects.filter(name_search.entities_named_like("moved")).values_list("pk", flat=True)
    ) == {moved.pk + 1000}
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:  # raises if the index and the table disagree
            for _, _, index in name_search.INDEXED:
                cursor.execute(f"INSERT INTO {index}({index}) VALUES ('integrity-check')")


def test_a_page_of_entities_by_name_holds_its_aliases_and_counts():
    entity("Ada Lovelace", "Lady Lovelace")
    entity("Lovelace Road", "Road to Ada")
    entity("Grace Hopper")
    page = list(selectors.entities_search(name="LOVELACE"))
    assert [e.name for e in page] == ["Ada Lovelace", "Lovelace Road"]
    assert [[a.alias for a in e.alias_set.all()] for e in page] == [
        ["Lady Lovelace"],
        ["Road to Ada"],
    ]
    assert [e.name for e in selectors.entities_search(name="ada", kind="tool")] == [
        "Ada Lovelace",
        "Lovelace Road",
    ]


def plans(queries) -> list[list[str]]:
    """Each query's plan, as its lines (SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN)."""
    found = []
    with connection.cursor() as cursor:
        for query in queries:
            if connection.vendor == "sqlite":
                cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
                found.append([row[3] for row in cursor.fetchall()])
            else:
                cursor.execute(f"EXPLAIN {query['sql']}")
                found.append([row[0] for row in cursor.fetchall()])
    return found


def probes(queries) -> list[dict]:
    return [q for q in queries if f"LIMIT {name_search.PROBE + 1}" in q["sql"]]


def searched(text: str) -> tuple[set[str], list[list[str]]]:
    """What a search finds and the plans of its queries: the two probes, then the entities."""
    with CaptureQueriesContext(connection) as queries:
        names = found(text)
    asked = probes(queries.captured_queries)
    assert len(asked) == 2
    return names, plans([*asked, queries.captured_queries[-1]])


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 tables")
def test_sqlite_asks_the_trigram_tables_for_a_rare_piece():
    entity("Ada Lovelace", "Lady Lovelace")
    names, (name_probe, alias_probe, entities) = searched("lovelace")
    assert names == {"Ada Lovelace"}
    # L: the LIKE is answered inside the virtual table, from its trigrams.
    assert "SCAN palace_entity_name_trigrams VIRTUAL TABLE INDEX 0:L0" in name_probe
    assert "SCAN palace_entityalias_trigrams VIRTUAL TABLE INDEX 0:L0" in alias_probe
    assert not [step for step in entities if step.startswith("SCAN palace_entity")], entities


def test_a_common_piece_is_read_in_the_pages_order(monkeypatch):
    """More names hold it than the probe reads: the page is `icontains` in id order, which
    stops at the page's end (the ids the aliases' index found are still used)."""
    monkeypatch.setattr(name_search, "PROBE", 3)
    for number in range(5):
        entity(f"common {number}")
    entity("rare", "uncommon alias")
    with CaptureQueriesContext(connection) as queries:
        page = list(selectors.entities_search(name="common")[:2])
    assert [e.name for e in page] == ["common 0", "common 1"]
    # The names' probe, then the page: the aliases' probe is not needed.
    assert len(probes(queries.captured_queries)) == 1
    page_query = next(q["sql"] for q in queries.captured_queries if "palace_mention" in q["sql"])
    assert "LIKE" in page_query
    assert "IN (SELECT" in page_query  # the aliases as a subquery, not the ids an index found
    assert found("common") == scanned("common")
    assert len(found("common")) == 6


def test_a_text_longer_than_any_name_finds_nothing_unread():
    entity("x" * 200, "y" * 200)
    with CaptureQueriesContext(connection) as queries:
        assert list(selectors.entities_search(name="x" * 201)) == []
    assert queries.captured_queries == []
    assert found("x" * 200) == {"x" * 200}
    assert found("y" * 200) == {"x" * 200}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's LIKE without ESCAPE")
def test_sqlite_searches_a_text_holding_a_like_wildcard_by_the_scan():
    entity("100% Pure")
    entity("100 Pure")
    with CaptureQueriesContext(connection) as queries:
        assert found("0%") == {"100% Pure"}
    assert len(queries.captured_queries) == 1
    assert "_trigrams" not in queries.captured_queries[0]["sql"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's pg_trgm indexes")
def test_postgresql_answers_a_rare_piece_from_its_trigram_indexes():
    """The indexes are on the very expression `icontains` compares, and the planner picks them
    for a rare piece of a name once the tables are analysed."""
    many = Entity.objects.bulk_create(
        Entity(name=f"entity {n}", kind="tool", key=f"entity {n}") for n in range(3_000)
    )
    EntityAlias.objects.bulk_create(
        EntityAlias(entity=e, alias=f"alias {e.pk}", key=f"alias {e.pk}") for e in many
    )
    entity("Ada Lovelace", "Lady Lovelace")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_entity, palace_entityalias")
    names, (name_probe, alias_probe, _) = searched("lovelace")
    assert names == {"Ada Lovelace"}
    assert any("Bitmap Index Scan on palace_entity_name_trigrams" in s for s in name_probe)
    assert any("Bitmap Index Scan on palace_entityalias_trigrams" in s for s in alias_probe)


def test_the_admin_finds_entities_by_a_piece_of_name_alias_key_or_id(admin_client):
    ada = entity("Ada Lovelace", "Countess of Lovelace")
    grace = entity("Grace Hopper", "Amazing Grace")
    Entity.objects.filter(pk=grace.pk).update(key="rear admiral hopper")

    def shown(text: str) -> list[str]:
        page = admin_client.get("/admin/palace/entity/", {"q": text})
        assert page.status_code == 200
        return sorted(entity.name for entity in page.context["cl"].result_list)

    assert shown("lovelace") == ["Ada Lovelace"]  # its name and its alias: shown once
    assert shown("AMAZING") == ["Grace Hopper"]
    assert shown("Rear Admiral Hopper") == ["Grace Hopper"]  # its key, folded as keys are
    assert shown(str(ada.uuid)) == ["Ada Lovelace"]
    assert shown("  ") == ["Ada Lovelace", "Grace Hopper"]
    assert shown("nobody") == []
    assert shown("Lovelace Ada") == ["Ada Lovelace"]  # every word, in any order
    assert shown('"Lovelace Ada"') == []  # a quoted phrase, whole
    assert shown('"ada love"') == ["Ada Lovelace"]
    assert shown("grace lovelace") == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner settings")
def test_postgresql_probes_with_table_scans_off_and_puts_the_setting_back():
    """A probe run often gets a generic plan that does not know the pattern: with table scans
    on it read the table until it had its ids. They are off for the probes alone."""
    entity("Ada Lovelace", "Lady Lovelace")
    with CaptureQueriesContext(connection) as queries:
        assert found("lovelace") == {"Ada Lovelace"}
    sql = [q["sql"] for q in queries.captured_queries]
    for probe in probes(queries.captured_queries):
        at = sql.index(probe["sql"])
        assert "set_config('enable_seqscan', 'off', true)" in sql[at - 1]
        assert sql[at + 1] == "SELECT set_config('enable_seqscan', 'on', true)"
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone() == ("on",)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 segments")
def test_maintenance_merges_the_trigram_tables_segments(capsys):
    """`dedup_maintain` merges each FTS5 table's segments, as after a bulk load (one segment a
    transaction), and the search answers the same after."""
    from django.core.management import call_command

    for number in range(3):  # a segment each
        entity(f"Lovelace {number}")

    def segments(index: str) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {index}_idx")  # a row per segment and term
            return cursor.fetchone()[0]

    before = {index: segments(index) for _, _, index in name_search.INDEXED}
    call_command("dedup_maintain")
    assert "palace_entity_name_trigrams" in capsys.readouterr().out
    assert segments("palace_entity_name_trigrams") < before["palace_entity_name_trigrams"]
    assert found("lovelace") == {"Lovelace 0", "Lovelace 1", "Lovelace 2"}


def test_the_queue_s_entity_links_by_name_are_the_scan_s(probe):
    """The review queue's `q` over entity links (either side's name, aliases aside) from the
    names' index: the links the scan by `icontains` across both joins found, through both of
    the probe's answers."""
    from palace.models import EntityLink
    from review.selectors import QueueFilters, entity_links

    made = [entity(name, f"alias of {name}") for name in ADVERSARIAL]
    for newer, older in zip(made[1:], made, strict=False):
        EntityLink.objects.create(newer=newer, older=older, similarity=0.9, distance=2)
    for text in [*QUERIES, "alias of", "x" * 300]:
        indexed = set(entity_links(QueueFilters(q=text)).values_list("pk", flat=True))
        scan = EntityLink.objects.filter(
            Q(newer__name__icontains=text) | Q(older__name__icontains=text)
        )
        assert indexed == set(scan.values_list("pk", flat=True)), text
        inside = EntityLink.objects.filter(pk__in=entity_links(QueueFilters(q=text)).values("pk"))
        assert set(inside.values_list("pk", flat=True)) == indexed, text  # as a subquery too


def test_the_queue_s_entity_links_by_a_rare_name_compare_no_name():
    from review.selectors import QueueFilters, entity_links

    entity("Ada Lovelace")
    assert "LIKE" not in str(entity_links(QueueFilters(q="lovelace")).query).upper()
