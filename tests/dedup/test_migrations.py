"""Migrations are history and the code is today: what the migrations installed must be what the
code expects, whatever database they ran on and from whichever migration it started.

The drift tests compare what is installed with what installing the code's own definition gives
(in a transaction rolled back afterwards), so the database's normal form (pg_get_functiondef,
pg_indexes.indexdef, sqlite_master.sql) is compared with itself.
"""

import ast
import importlib
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import ProgrammingError
from django.test.utils import CaptureQueriesContext

from dedup import candidates, policy, services
from dedup.policy.signatures import reach_range, reach_signatures
from palace import fulltext, name_search
from palace.models import Drawer, Entity, EntitySignature, Room

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = candidates.POSTGRESQL_FUNCTION_NAME
TEXT = "The deploy script must run database migrations before restarting the web workers."
TYPO = TEXT.replace("migrations", "migratoins")
postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL")
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite")


def migration(app: str, name: str):
    return importlib.import_module(f"{app}.migrations.{name}")


def migrate(*targets) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(list(targets) or executor.loader.graph.leaf_nodes())


# --- what is installed, and what the code would install ------------------------------------------


def installed_functions(name: str = FUNCTION) -> list[tuple[str, str]]:
    """(identity arguments, pg_get_functiondef) of every signature of the named function (the
    drawer candidates function unless told)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_function_identity_arguments(oid), pg_get_functiondef(oid) "
            "FROM pg_proc WHERE proname = %s ORDER BY 1",
            [name],
        )
        return cursor.fetchall()


def functions_installing(sql: str, name: str = FUNCTION) -> list[tuple[str, str]]:
    """What `installed_functions` would be with only `sql` installed (nothing is kept)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            for arguments, _ in installed_functions(name):
                cursor.execute(f"DROP FUNCTION {name}({arguments})")
            cursor.execute(sql)
        expected = installed_functions(name)
        transaction.set_rollback(True)
    return expected


def fulltext_objects() -> list[tuple[str, str]]:
    """(name, definition with whitespace normalised) of the full-text index or FTS5 objects."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = %s UNION ALL "
                "SELECT proname, pg_get_functiondef(oid) FROM pg_proc WHERE proname = %s",
                ["palace_drawer_fulltext", fulltext.POSTGRESQL_FUNCTION_NAME],
            )
        else:
            names = ["palace_drawer_fts", *fulltext.SQLITE_TRIGGERS]
            placeholders = ", ".join("%s" for _ in names)
            cursor.execute(
                f"SELECT name, sql FROM sqlite_master WHERE name IN ({placeholders}) ORDER BY name",
                names,
            )
        return [(name, " ".join(sql.split())) for name, sql in cursor.fetchall()]


def fulltext_objects_of_the_code() -> list[tuple[str, str]]:
    """What `fulltext_objects` would be with the code's definition installed (nothing is kept)."""
    if connection.vendor == "postgresql":
        statements = [*fulltext.POSTGRESQL_REMOVE, *fulltext.POSTGRESQL]
    else:
        statements = [*fulltext.SQLITE_REMOVE, *fulltext.SQLITE]
    with transaction.atomic():
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
        expected = fulltext_objects()
        transaction.set_rollback(True)
    return expected


def name_search_objects() -> list[tuple[str, str]]:
    """(name, definition with whitespace normalised) of the entity names' trigram indexes (or
    FTS5 tables and their triggers)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            names = name_search.POSTGRESQL_OBJECTS
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s) "
                "ORDER BY indexname",
                [names],
            )
        else:
            names = name_search.SQLITE_OBJECTS
            placeholders = ", ".join("%s" for _ in names)
            cursor.execute(
                f"SELECT name, sql FROM sqlite_master WHERE name IN ({placeholders}) ORDER BY name",
                names,
            )
        return [(name, " ".join(sql.split())) for name, sql in cursor.fetchall()]


def name_search_objects_of_the_code() -> list[tuple[str, str]]:
    if connection.vendor == "postgresql":
        statements = [*name_search.POSTGRESQL_REMOVE, *name_search.POSTGRESQL]
    else:
        statements = [*name_search.SQLITE_REMOVE, *name_search.SQLITE]
    with transaction.atomic():
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
        expected = name_search_objects()
        transaction.set_rollback(True)
    return expected


def assert_installed_as_the_code_expects() -> None:
    if connection.vendor == "postgresql":
        assert installed_functions() == functions_installing(candidates.POSTGRESQL_FUNCTION)
        entity_function = candidates.ENTITY_FUNCTION_NAME
        assert installed_functions(entity_function) == functions_installing(
            candidates.POSTGRESQL_ENTITY_FUNCTION, entity_function
        )
        words_function = candidates.WORDS_FUNCTION_NAME
        assert installed_functions(words_function) == functions_installing(
            candidates.WORDS_FUNCTION, words_function
        )
    expected = fulltext_objects_of_the_code()
    assert len(expected) == (2 if connection.vendor == "postgresql" else 4)
    assert fulltext_objects() == expected
    expected_names = name_search_objects_of_the_code()
    assert len(expected_names) == (2 if connection.vendor == "postgresql" else 8)
    assert name_search_objects() == expected_names


def assert_writes_deduplicate() -> None:
    """An exact copy is refused and a typo variant is linked to its original, through the write
    path and, on PostgreSQL, through the candidates function."""
    original = services.drawer_write_in(wing="ops", room="runbooks", content=TEXT)
    with CaptureQueriesContext(connection) as queries:
        copy = services.drawer_write_in(wing="ops", room="runbooks", content=TEXT)
        variant = services.drawer_write_in(wing="ops", room="runbooks", content=TYPO)
    assert original.created
    assert not copy.created
    assert copy.duplicate_of == original.drawer
    assert variant.created
    assert [link.older_id for link in variant.links] == [original.drawer.id]
    if connection.vendor == "postgresql":
        calls = [q["sql"] for q in queries.captured_queries if f"FROM {FUNCTION}(" in q["sql"]]
        assert len(calls) == 2


# --- the tests -----------------------------------------------------------------------------------


def test_migrations_import_no_live_project_code():
    """Changing the code must never change what an old migration did. The one exception is the
    pure policy, which dedup's data migrations ask for the values the write path computes (see
    their docstrings)."""
    allowed = {
        ("dedup/migrations/0001_dedup_keys.py", "dedup"),  # `from dedup import policy`
        ("dedup/migrations/0004_entity_signatures.py", "dedup.policy.signatures"),
        (
            "dedup/migrations/0011_entity_signatures_carry_lengths.py",
            "dedup.policy.signatures",
        ),
        ("dedup/migrations/0016_index_text.py", "dedup"),  # `from dedup import policy`
        ("dedup/migrations/0017_marks_in_words.py", "dedup"),
        ("dedup/migrations/0017_marks_in_words.py", "dedup.policy.signatures"),
        ("dedup/migrations/0018_usual_widths.py", "dedup"),
        ("dedup/migrations/0018_usual_widths.py", "dedup.policy.signatures"),
        ("dedup/migrations/0019_character_pairs.py", "dedup"),
        ("dedup/migrations/0020_korean_pairs.py", "dedup"),
    }
    offences = []
    for app in ("palace", "dedup", "review", "api"):
        for path in sorted((ROOT / app / "migrations").glob("*.py")):
            relative = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                else:
                    continue
                offences += [
                    f"{relative} imports {name}"
                    for name in names
                    if name.split(".")[0] in {"palace", "dedup", "review", "api", "config"}
                    and (relative, name) not in allowed
                ]
    assert offences == []


def test_the_data_migration_asks_only_the_policy():
    source = (ROOT / "dedup/migrations/0001_dedup_keys.py").read_text(encoding="utf-8")
    assert "from dedup import policy" in source
    assert "backfill import" not in source


def test_installed_full_text_objects_and_function_are_the_code_s(dedup_settings):
    """The drift test: the test database was migrated from zero."""
    assert_installed_as_the_code_expects()
    assert_writes_deduplicate()


@postgresql_only
def test_one_signature_is_installed_and_it_queries_the_index_s_expression():
    [(_, definition)] = installed_functions()
    body = candidates.POSTGRESQL_FUNCTION.split("$$")[1]
    assert body in definition
    assert fulltext.postgresql_document("m") in body


@pytest.mark.django_db(transaction=True)
def test_migrating_from_zero_to_the_latest_installs_what_the_code_expects(dedup_settings):
    migrate(("palace", None))  # before the first migration: dedup and review go back too
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
    assert not {"palace_drawer", "palace_drawer_fts"} & set(tables)
    if connection.vendor == "postgresql":
        assert installed_functions() == []

    migrate()
    assert_installed_as_the_code_expects()
    assert_writes_deduplicate()


@postgresql_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "also_installed",
    [
        pytest.param(None, id="as-0002-left-it"),
        # A database migrated between commits f3adaa4 and abfeb5e, when 0002 called the live
        # code: the function of today's signature (with an older body, for all it knows).
        pytest.param(
            migration("dedup", "0003_candidates_function_length_band").FUNCTION,
            id="with-a-twelve-argument-version",
        ),
    ],
)
def test_upgrading_from_the_function_of_0002(dedup_settings, also_installed):
    migrate(("dedup", "0002_candidates_function"))
    old = migration("dedup", "0002_candidates_function")
    assert installed_functions() == functions_installing(old.FUNCTION)
    if also_installed is None:
        # The failure the new migration mends: the code calls a signature not installed.
        with pytest.raises(ProgrammingError):
            services.drawer_write_in(wing="ops", room="runbooks", content=TEXT)
    else:
        with connection.cursor() as cursor:
            cursor.execute(also_installed)
        assert len(installed_functions()) == 2

    migrate()
    assert len(installed_functions()) == 1
    assert_installed_as_the_code_expects()
    assert_writes_deduplicate()


@postgresql_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("target", "reversed_by"),
    [
        ("0002_candidates_function", "0003_candidates_function_length_band"),
        ("0003_candidates_function_length_band", "0005_candidates_function_bounded"),
        ("0005_candidates_function_bounded", "0006_candidates_function_generic_lookups"),
        ("0006_candidates_function_generic_lookups", "0008_candidates_function_room_outside_index"),
        ("0008_candidates_function_room_outside_index", "0009_candidates_function_room_terms"),
        ("0009_candidates_function_room_terms", "0010_candidates_functions_without_jit"),
        ("0010_candidates_functions_without_jit", "0016_index_text"),
    ],
)
def test_a_function_migration_reverses_to_the_function_before_it(
    dedup_settings, target, reversed_by
):
    migrate()
    migrate(("dedup", target))
    previous = migration("dedup", target).FUNCTION
    assert installed_functions() == functions_installing(previous)
    assert previous == migration("dedup", reversed_by).PREVIOUS_FUNCTION

    migrate()
    assert_installed_as_the_code_expects()
    assert_writes_deduplicate()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_the_room_key_migration_reverses_to_the_index_of_0011(dedup_settings):
    """palace 0013 keys the full-text index by room (btree_gin); reversed, the index of 0011
    (the tsvector alone) is back, and migrating again installs the code's."""
    migrate(("palace", "0012_entity_signature_keys"))
    [(_, definition)] = fulltext_objects()
    assert "room_id" not in definition
    migrate()
    assert_installed_as_the_code_expects()
    assert_writes_deduplicate()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_the_room_terms_migration_indexes_existing_drawers_and_reverses(dedup_settings):
    """palace 0015 indexes each word of a room as a term of its own (castellan_drawer_terms):
    drawers stored before are found by the write path after it; reversed, the index of 0013
    (the room's key beside the words) is back, without the terms function."""
    migrate(("palace", "0014_queue_by_rule"))
    original = old_drawer()
    migrate()
    assert_installed_as_the_code_expects()
    variant = services.drawer_write(room=Room.objects.get(pk=original.room_id), content=TYPO)
    assert [link.older_id for link in variant.links] == [original.id]

    migrate(("palace", "0014_queue_by_rule"))
    [(_, definition)] = fulltext_objects()
    assert "(room_id + 0)" in definition
    migrate()


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_room_column_migration_rebuilds_an_existing_full_text_index(dedup_settings):
    """A database with drawers indexed by the table of 0002 (no room): migrating fills the new
    table from palace_drawer, so the write path finds its old drawers; reversing restores the old
    table."""
    migrate(("palace", "0010_entity_signatures"))
    old = migration("palace", "0011_drawer_fulltext_room")
    original = old_drawer()
    migrate()
    assert_installed_as_the_code_expects()
    variant = services.drawer_write(room=Room.objects.get(pk=original.room_id), content=TYPO)
    assert [link.older_id for link in variant.links] == [original.id]

    migrate(("palace", "0010_entity_signatures"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'palace_drawer_fts'")
        [(sql,)] = cursor.fetchall()
    assert " ".join(sql.split()) == " ".join(old.PREVIOUS_SQLITE[0].split()).replace(
        "IF NOT EXISTS ", ""
    )
    migrate()


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_room_terms_migration_fills_the_terms_of_existing_drawers(dedup_settings):
    """palace 0015 makes each word of a room a term of its own: the table of 0011 (the room a
    column) is replaced and filled from palace_drawer, so the write path finds its old drawers;
    reversing restores the table of 0011."""
    migrate(("palace", "0014_queue_by_rule"))
    original = old_drawer()
    migrate()
    assert_installed_as_the_code_expects()
    variant = services.drawer_write(room=Room.objects.get(pk=original.room_id), content=TYPO)
    assert [link.older_id for link in variant.links] == [original.id]

    migrate(("palace", "0014_queue_by_rule"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'palace_drawer_fts'")
        [(sql,)] = cursor.fetchall()
    previous = migration("palace", "0015_drawer_fulltext_room_terms").PREVIOUS_SQLITE[0]
    assert " ".join(sql.split()) == " ".join(previous.split()).replace("IF NOT EXISTS ", "")
    migrate()


def old_drawer(text: str = TEXT):
    """A drawer stored as a bulk load or an earlier version stored it (the index's triggers of
    the time made its entries), through the model as the migrations applied now have it."""
    room = services.room_get_or_create(wing="ops", room="runbooks")
    loader = MigrationExecutor(connection).loader
    state = loader.project_state(list(loader.applied_migrations))
    return state.apps.get_model("palace", "Drawer").objects.create(
        room_id=room.id,
        content=text,
        content_hash=policy.content_hash(text),
        normalized_content=policy.normalize_text(text),
        fingerprint=policy.fingerprint(text),
    )


def test_the_new_migration_installs_the_code_s_function_text():
    """Cheap, and on every database: the latest function migration holds the code's text. A
    change to the function's text needs a new migration (and this test then names it)."""
    latest = migration("dedup", "0016_index_text")
    assert latest.FUNCTION == candidates.POSTGRESQL_FUNCTION
    drops = " ".join(latest.WITHOUT_JIT.DROP_SIGNATURES)
    assert candidates.POSTGRESQL_FUNCTION_REMOVE.split(FUNCTION)[1] in drops


def test_the_words_function_migration_installs_the_code_s_text():
    latest = migration("dedup", "0016_index_text")
    assert latest.WORDS_FUNCTION == candidates.WORDS_FUNCTION
    assert latest.WORDS_HELD.REMOVE == candidates.WORDS_FUNCTION_REMOVE


def test_the_entity_function_migration_installs_the_code_s_text():
    """As for the drawer function: the latest migration that installs the entity lookup
    function holds the code's text and drops the code's signature of it."""
    latest = migration("dedup", "0015_entity_lookup_banded_function")
    assert latest.FUNCTION == candidates.POSTGRESQL_ENTITY_FUNCTION
    assert latest.REMOVE == candidates.POSTGRESQL_ENTITY_FUNCTION_REMOVE


def fuzzystrmatch_installed() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_extension WHERE extname = 'fuzzystrmatch'")
        return cursor.fetchone()[0] == 1


@postgresql_only
def test_the_entity_function_migrations_reverse_and_install_again(dedup_settings):
    """0013's function has a name of its own and leaves 0012's as it was, for the processes of
    the release before that serve while it runs (its rows changed shape)."""
    before, lookup = "castellan_entity_candidates", candidates.ENTITY_FUNCTION_NAME
    of_0012 = functions_installing(
        migration("dedup", "0012_entity_candidates_function").FUNCTION, before
    )
    assert installed_functions(before) == of_0012
    migrate(("dedup", "0012_entity_candidates_function"))
    assert installed_functions(lookup) == []
    assert not fuzzystrmatch_installed()
    assert installed_functions(before) == of_0012
    migrate(("dedup", "0011_entity_signatures_carry_lengths"))
    assert installed_functions(before) == []
    migrate()
    assert fuzzystrmatch_installed()
    assert installed_functions(lookup) == functions_installing(
        candidates.POSTGRESQL_ENTITY_FUNCTION, lookup
    )
    assert installed_functions(before) == of_0012
    ada = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    typo = services.entity_resolve(name="Ada Lovelaec", kind="person")
    assert (typo.entity, typo.rule) == (ada, "typo")


@postgresql_only
def test_the_banded_function_reverses_to_0013_s_which_stays_for_the_release_before(
    dedup_settings,
):
    """0015's function has a name of its own and leaves 0013's as it was (its rows changed
    shape: the bands come first)."""
    before, lookup = "castellan_entity_lookup", candidates.ENTITY_FUNCTION_NAME
    of_0013 = functions_installing(
        migration("dedup", "0013_entity_lookup_function").FUNCTION, before
    )
    assert installed_functions(before) == of_0013
    migrate(("dedup", "0014_words_held_function"))
    assert installed_functions(lookup) == []
    assert installed_functions(before) == of_0013
    migrate()
    assert installed_functions(lookup) == functions_installing(
        candidates.POSTGRESQL_ENTITY_FUNCTION, lookup
    )


@postgresql_only
def test_the_function_of_0013_still_answers_the_release_before(dedup_settings):
    """What a process of the release before reads from 0013's function once 0015 has run: the
    entity an exact lookup finds, and no band."""
    ada = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT part, id FROM castellan_entity_lookup"
            "(NULL, 'Ada Lovelace', %s, 'person', NULL, 0, 0)",
            [ada.key],
        )
        assert cursor.fetchall() == [(0, ada.pk)]


@postgresql_only
def test_the_function_of_0012_still_answers_the_release_before(dedup_settings):
    """What a process of the release before reads from 0012's function, once 0013 has run:
    an exact match with its alias, and (owner, key) pairs of the signatures asked."""
    ada = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=ada, alias="Countess of Lovelace")
    key = policy.entity_key("countess of lovelace")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT part, id, key, known_alias FROM castellan_entity_candidates"
            "(NULL, %s, %s, 'person', NULL, 0, 0)",
            ["countess of lovelace", key],
        )
        assert cursor.fetchall() == [(0, ada.pk, ada.key, "Countess of Lovelace")]
        typo = policy.entity_key("Ada Lovelaec")
        low, high = reach_range(typo)
        cursor.execute(
            "SELECT DISTINCT part, id, key FROM castellan_entity_candidates"
            "(NULL, 'Ada Lovelaec', %s, 'person', %s::bigint[], %s, %s)",
            [typo, candidates.signatures_parameter(reach_signatures(typo)), low, high],
        )
        assert (1, ada.pk, ada.key) in cursor.fetchall()


# A sentence of Chinese without punctuation: one "word" of its normalised text.
UNSPACED = (
    "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了迁移将在下周一进行"
)
UNSPACED_TYPO = UNSPACED.replace("磁盘", "硬盘")


@pytest.mark.django_db(transaction=True)
def test_the_index_text_migrations_fill_existing_drawers_and_reverse(dedup_settings):
    """palace 0024 and dedup 0016: a drawer stored before in a script written without spaces
    gets its index words, and the write path finds it by them; reversed, the column and its
    expression are gone, and migrating again installs the code's."""
    migrate(("palace", "0023_audit_batch"))
    original = old_drawer(UNSPACED)
    latin = old_drawer()
    migrate()
    assert_installed_as_the_code_expects()
    assert Drawer.objects.get(pk=original.pk).index_text == policy.index_text(
        policy.normalize_text(UNSPACED)
    )
    assert Drawer.objects.get(pk=latin.pk).index_text is None
    room = Room.objects.get(pk=original.room_id)
    # The room is big enough that the write asks the index rather than every drawer.
    for n in range(40):
        services.drawer_write(room=room, content=f"{UNSPACED[n % 7 :][:20]}其他记录{n}号")
    variant = services.drawer_write(room=room, content=UNSPACED_TYPO)
    assert [link.older_id for link in variant.links] == [original.id]

    migrate(("palace", "0023_audit_batch"))
    with connection.cursor() as cursor:
        columns = [
            c.name for c in connection.introspection.get_table_description(cursor, "palace_drawer")
        ]
    assert "index_text" not in columns
    assert all("index_text" not in definition for _, definition in fulltext_objects())
    migrate()
    assert_installed_as_the_code_expects()


FOREST = "ครอบครัวของเราจะไปเยี่ยมป่าที่เชียงใหม่สุดสัปดาห์นี้"  # visit the forest...
AUNT = FOREST.replace("ป่า", "ป้า")  # ... visit the aunt: another fact


@pytest.mark.django_db(transaction=True)
def test_the_marks_migration_computes_texts_and_keys_again_and_reverses(dedup_settings):
    """dedup 0017: a drawer and an entity stored when a Thai tone mark separated words get the
    normalised text, fingerprint and key of today's rules (and the key's signatures), so a text
    differing only in a tone mark is no longer "the same words"; reversed, the rules before."""
    previous = migration("dedup", "0017_marks_in_words")
    migrate(("dedup", "0016_index_text"))
    drawer = old_drawer(FOREST)
    Drawer.objects.filter(pk=drawer.pk).update(
        normalized_content=previous._previous_normalize_text(FOREST),
        fingerprint=policy.fingerprint_of_normalized(previous._previous_normalize_text(FOREST)),
        index_text=policy.index_text(previous._previous_normalize_text(FOREST)),
    )
    entity = Entity.objects.create(
        name="ป่าไม้", kind="place", key=previous._previous_entity_key("ป่าไม้"), key_length=4
    )
    assert entity.key == "ป าไม"  # the tone mark separated
    # "İ" casefolds to "i" and a dot above: a mark below U+0300 in the text.
    izmir = Entity.objects.create(
        name="İzmir", kind="place", key=previous._previous_entity_key("İzmir"), key_length=6
    )
    # A run of marks was one space; kept, they would outgrow the key's 200 characters.
    marked = "\u0390" * 100
    long_key = previous._previous_entity_key(marked)
    assert len(long_key) <= 200 < len(policy.entity_key(marked))
    too_long = Entity.objects.create(
        name=marked, kind="thing", key=long_key, key_length=len(long_key)
    )
    migrate()
    izmir.refresh_from_db()
    assert izmir.key == policy.entity_key("İzmir") != previous._previous_entity_key("İzmir")
    too_long.refresh_from_db()
    assert too_long.key == long_key  # kept: the write path refuses such a name
    drawer.refresh_from_db()
    assert drawer.normalized_content == policy.normalize_text(FOREST)
    assert drawer.fingerprint == policy.fingerprint(FOREST)
    entity.refresh_from_db()
    assert (entity.key, entity.key_length) == (policy.entity_key("ป่าไม้"), len("ป่าไม้"))
    assert EntitySignature.objects.filter(entity=entity, key=entity.key).exists()
    room = Room.objects.get(pk=drawer.room_id)
    aunt = services.drawer_write(room=room, content=AUNT)
    assert [link.verdict for link in aunt.links] != ["normalized"]

    migrate(("dedup", "0016_index_text"))
    drawer.refresh_from_db()
    assert drawer.normalized_content == previous._previous_normalize_text(FOREST)
    assert drawer.index_text == policy.index_text(drawer.normalized_content, pairs=False)
    entity.refresh_from_db()
    assert entity.key == "ป าไม"
    migrate()


FULL_WIDTH = "ＡＷＳのＳ３バケットにログを保存する"
USUAL_WIDTH = "AWSのS3バケットにログを保存する"


@pytest.mark.django_db(transaction=True)
def test_the_widths_migration_computes_texts_and_keys_again_and_reverses(dedup_settings):
    """dedup 0018: a drawer and an entity stored when a full-width letter was another character
    get today's normalised text, fingerprint and key (and the key's signatures), so a text in the
    usual width is "the same words"; reversed, the rules before. Other rows are left alone."""
    previous = migration("dedup", "0018_usual_widths")
    migrate(("dedup", "0017_marks_in_words"))
    drawer = old_drawer(FULL_WIDTH)
    before = previous._previous_normalize_text(FULL_WIDTH)
    assert before != policy.normalize_text(FULL_WIDTH)
    Drawer.objects.filter(pk=drawer.pk).update(
        normalized_content=before,
        fingerprint=policy.fingerprint_of_normalized(before),
        index_text=policy.index_text(before),
    )
    latin = old_drawer()
    twin = old_drawer(USUAL_WIDTH)  # stored apart before: other characters then
    entity = Entity.objects.create(
        name="ＡＷＳ", kind="tool", key=previous._previous_entity_key("ＡＷＳ"), key_length=3
    )
    assert entity.key == "ａｗｓ"
    migrate()
    drawer.refresh_from_db()
    assert drawer.normalized_content == policy.normalize_text(USUAL_WIDTH)
    assert drawer.fingerprint == policy.fingerprint(USUAL_WIDTH)
    assert drawer.index_text == policy.index_text(policy.normalize_text(USUAL_WIDTH))
    entity.refresh_from_db()
    assert (entity.key, entity.key_length) == ("aws", 3)
    assert EntitySignature.objects.filter(entity=entity, key="aws").exists()
    assert not EntitySignature.objects.filter(entity=entity, key="ａｗｓ").exists()
    assert Drawer.objects.get(pk=latin.pk).normalized_content == policy.normalize_text(TEXT)
    # The twins stored before are the same words now: the next sweep proposes them.
    from review.services import sweeps

    run = sweeps.execute(sweeps.start(threshold=0.9))
    assert [(p.newer_pk, p.older_pk, p.tier) for p in run.proposals.all()] == [
        (twin.pk, drawer.pk, "normalized")
    ]
    room = Room.objects.get(pk=drawer.room_id)
    written = services.drawer_write(room=room, content=f"{FULL_WIDTH}。")
    assert {(link.older_id, link.verdict) for link in written.links} == {
        (twin.pk, "normalized"),
        (drawer.pk, "normalized"),
    }

    migrate(("dedup", "0017_marks_in_words"))
    drawer.refresh_from_db()
    assert drawer.normalized_content == before
    # Without the pairs of characters dedup 0019 adds, whose reverse ran first.
    assert drawer.index_text == policy.index_text(before, pairs=False)
    entity.refresh_from_db()
    assert entity.key == "ａｗｓ"
    migrate()


def test_the_rules_before_the_widths_migration_are_today_s_for_other_texts():
    """0018's reverse holds the rules of 0017: on texts of no other width they are today's."""
    import random

    previous = migration("dedup", "0018_usual_widths")
    points = [*range(32, 0x250), *range(0x300, 0x370), *range(0x0E00, 0x0E60), 0x130, 0x2019]
    points += [*range(0x900, 0x980), 0xFE0F, 0x4E00, 0x3042, 0x30AB, 0x3099, ord("+"), ord("#")]
    rng = random.Random(18)
    for _ in range(10_000):
        text = "".join(chr(rng.choice(points)) for _ in range(rng.randint(0, 16)))
        assert previous._previous_normalize_text(text) == policy.normalize_text(text), repr(text)
        assert previous._previous_entity_key(text) == policy.entity_key(text), repr(text)


@pytest.mark.django_db(transaction=True)
def test_the_pairs_migration_gives_index_texts_their_pairs_and_reverses(dedup_settings):
    """dedup 0019: a drawer indexed by the pieces of its sentence alone gets its pairs of
    characters, and search finds a word in the middle of it; reversed, the pieces alone."""
    from dedup.search import drawers_search

    previous = migration("dedup", "0019_character_pairs")
    migrate(("dedup", "0018_usual_widths"))
    normalized = policy.normalize_text(UNSPACED)
    drawer = old_drawer(UNSPACED)
    before = previous._without_pairs(normalized)
    assert before is not None
    assert "据库" not in before.split(" ")
    Drawer.objects.filter(pk=drawer.pk).update(index_text=before)
    short = old_drawer("东京塔 很高")  # no index text before: its words were its own
    assert previous._without_pairs(policy.normalize_text("东京塔 很高")) is None
    latin = old_drawer()
    migrate()
    drawer.refresh_from_db()
    assert drawer.index_text == policy.index_text(normalized)
    assert "据库" in drawer.index_text.split(" ")
    assert Drawer.objects.get(pk=short.pk).index_text == "东京塔 东京 京塔 很高"
    assert Drawer.objects.get(pk=latin.pk).index_text is None
    hits = drawers_search(query="数据库").hits
    assert [hit.drawer.pk for hit in hits] == [drawer.pk]

    migrate(("dedup", "0018_usual_widths"))
    drawer.refresh_from_db()
    assert drawer.index_text == before
    assert Drawer.objects.get(pk=short.pk).index_text is None
    migrate()


@pytest.mark.django_db(transaction=True)
def test_the_korean_pairs_migration_gives_korean_drawers_pairs_and_reverses(dedup_settings):
    """dedup 0020: a Korean drawer had no index text (its words were its own); it gets its
    words' pairs of syllables, and search finds a word with its particle; reversed, none
    again. A drawer of Chinese and Korean keeps its Chinese pairs either way."""
    from dedup.search import drawers_search

    previous = migration("dedup", "0020_korean_pairs")
    migrate(("dedup", "0019_character_pairs"))
    korean = old_drawer("서울에서 데이터베이스 이전 회의를 했습니다")
    mixed_text = "东京塔 서울에서"
    mixed = old_drawer(mixed_text)
    Drawer.objects.filter(pk=mixed.pk).update(
        index_text=previous._without_korean_pairs(policy.normalize_text(mixed_text))
    )
    latin = old_drawer()
    migrate()
    korean.refresh_from_db()
    assert korean.index_text.split(" ")[:4] == ["서울에서", "서울", "울에", "에서"]
    assert Drawer.objects.get(pk=mixed.pk).index_text == "东京塔 东京 京塔 서울에서 서울 울에 에서"
    assert Drawer.objects.get(pk=latin.pk).index_text is None
    assert [hit.drawer.pk for hit in drawers_search(query="회의").hits] == [korean.pk]

    migrate(("dedup", "0019_character_pairs"))
    assert Drawer.objects.get(pk=korean.pk).index_text is None
    assert Drawer.objects.get(pk=mixed.pk).index_text == "东京塔 东京 京塔 서울에서"
    migrate()
