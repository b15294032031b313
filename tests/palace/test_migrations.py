"""The migrations leave the full-text index live, whatever later migrations rebuilt."""

import threading
import time

import psycopg
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from palace.fulltext import SQLITE_TRIGGERS

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite triggers")
def test_fulltext_triggers_survive_table_rebuilds():
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        assert {row[0] for row in cursor.fetchall()} >= SQLITE_TRIGGERS


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL index")
def test_fulltext_index_exists_with_fastupdate_off():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'palace_drawer_fulltext'")
        assert cursor.fetchone()[0] == ["fastupdate=off"]


@pytest.mark.django_db(transaction=True)
def test_data_migration_fills_legacy_rows_once_and_merges_nothing():
    """Migrate back before dedup's data migration, lay rows down as a pre-deduplication palace
    would hold them (no fingerprint, no keys), and migrate forward: the real migration runs."""
    from django.db.migrations.executor import MigrationExecutor

    from dedup import policy
    from palace.models import Drawer, Entity

    def migrate(target):
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate([target])

    migrate(("dedup", None))
    # The rows as the tables are now (palace's later migrations went back with dedup's).
    loader = MigrationExecutor(connection).loader
    historical = loader.project_state(list(loader.applied_migrations)).apps
    wing = historical.get_model("palace", "Wing").objects.create(name="old")
    room = historical.get_model("palace", "Room").objects.create(wing=wing, name="r")
    for content in ("The same words.", "The same words.", "..."):
        historical.get_model("palace", "Drawer").objects.create(
            room=room,
            content=content,
            content_hash=policy.content_hash(content),
            normalized_content="",
            fingerprint=None,
        )
    Entity.objects.create(name="Ada", kind="person", key="", key_length=0)
    Entity.objects.create(name="ADA", kind="person", key="", key_length=0)

    migrate(("dedup", "0001_dedup_keys"))
    fingerprints = list(Drawer.objects.order_by("pk").values_list("fingerprint", flat=True))
    assert fingerprints == [policy.fingerprint("the same words")] * 2 + [None]  # no letter: none
    assert Drawer.objects.count() == 3
    assert Entity.objects.count() == 2  # nothing merged
    assert set(Entity.objects.values_list("key", "key_length")) == {("ada", 3)}

    migrate(("dedup", None))  # the reverse changes nothing
    migrate(("dedup", "0001_dedup_keys"))  # and running it twice changes nothing
    assert list(Drawer.objects.order_by("pk").values_list("fingerprint", flat=True)) == fingerprints
    executor = MigrationExecutor(connection)  # back to the latest: what later tests use
    executor.migrate(executor.loader.graph.leaf_nodes())


BEFORE_SOURCE = ("palace", "0004_audit_actions_named")
WITH_SOURCE = ("palace", "0005_entity_alias_source")


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_alias_sources_come_from_the_audit_log_and_the_migration_reverses():
    """Issue 10, item 20: an alias the audit log shows a person added (the API's route, or a
    curator's add_alias not reverted) is marked so; every other one is a convergence's."""
    try:
        apps = _migrate(BEFORE_SOURCE)
        entity_model = apps.get_model("palace", "Entity")
        alias_model = apps.get_model("palace", "EntityAlias")
        audit_model = apps.get_model("palace", "AuditEntry")
        ada = entity_model.objects.create(name="Ada", kind="person", key="ada", key_length=3)
        grace = entity_model.objects.create(name="Grace", kind="person", key="grace", key_length=5)
        for owner, alias in [
            (ada, "Lovelace"),  # the API's alias route
            (ada, "Countess"),  # a curator's add_alias
            (ada, "ADA"),  # a convergence
            (grace, "Hopper"),  # a curator's add_alias, reverted, then a convergence again
        ]:
            alias_model.objects.create(entity=owner, alias=alias, key=alias.lower())
        audit_model.objects.create(
            action="entity.alias_add",
            target_type="entity",
            target_id=str(ada.uuid),
            data={"alias": "Lovelace"},
        )
        audit_model.objects.create(
            action="review.add_alias",
            target_type="review_item",
            target_id="e1",
            after={"alias_added": "Countess", "canonical": ada.pk},
        )
        reverted = audit_model.objects.create(
            action="review.add_alias",
            target_type="review_item",
            target_id="e2",
            after={"alias_added": "Hopper", "canonical": grace.pk},
        )
        audit_model.objects.create(
            action="review.revert",
            target_type="decision",
            target_id=str(reverted.pk),
            data={"reverts": reverted.pk},
        )
        audit_model.objects.create(  # an add_alias that recorded nothing new
            action="review.add_alias",
            target_type="review_item",
            target_id="e3",
            after={"alias_added": None, "canonical": grace.pk},
        )

        apps = _migrate(WITH_SOURCE)
        sources = dict(
            apps.get_model("palace", "EntityAlias").objects.values_list("alias", "source")
        )
        assert sources["Lovelace"] == "api"
        assert sources["Countess"] == "curator"
        assert sources["ADA"] == "convergence"
        assert sources["Hopper"] == "convergence"

        apps = _migrate(BEFORE_SOURCE)  # the reverse: the column goes, the rows stay
        assert apps.get_model("palace", "EntityAlias").objects.count() == 4
    finally:
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.migrate(executor.loader.graph.leaf_nodes())


_PARTIAL_INDEXES = {  # (name, predicate) of each partial index of the table
    "postgresql": "SELECT c.relname, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid"
    " WHERE i.indrelid = %s::regclass AND i.indpred IS NOT NULL",
    "sqlite": "SELECT name, substr(sql, instr(sql, ' WHERE ') + 7) FROM sqlite_master"
    " WHERE type = 'index' AND tbl_name = %s AND instr(sql, ' WHERE ') > 0",
}


def _indexes_by_leading_column(table: str, *, whole: bool) -> dict[str, list[list[str]]]:
    """The table's indexes by leading column: with `whole`, only those over every row; else
    also those over the rows whose leading column is set (which serve any lookup by a value
    of it)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
        cursor.execute(_PARTIAL_INDEXES[connection.vendor], [table])
        partial = dict(cursor.fetchall())
    leading: dict[str, list[list[str]]] = {}
    for name, spec in constraints.items():
        columns = spec["columns"]
        if not (spec["index"] or spec["unique"] or spec["primary_key"]) or not columns:
            continue
        predicate = partial.get(name)
        set_only = f"{columns[0]} IS NOT NULL"
        if predicate is None or (not whole and predicate.replace('"', "").strip("() ") == set_only):
            leading.setdefault(columns[0], []).append(columns)
    return leading


def _foreign_keys():
    from django.apps import apps

    models = [
        model
        for app in ("palace", "review", "api")
        for model in apps.get_app_config(app).get_models()
    ]
    for model in models:
        for field in model._meta.local_fields:
            if field.is_relation and field.many_to_one:
                yield model._meta.db_table, field.column


@pytest.mark.parametrize(("table", "column"), list(_foreign_keys()))
def test_every_foreign_key_leads_an_index(table, column):
    """A lookup or a cascade by a foreign key reads an index, whether its own or a composite
    one that leads with it (palace 0020 and review 0008 dropped those the composites cover)."""
    assert column in _indexes_by_leading_column(table, whole=False)


@pytest.mark.parametrize(("table", "column"), list(_foreign_keys()))
def test_no_foreign_key_has_an_index_another_one_covers(table, column):
    """One index fewer to write per row: a foreign key's own single-column index goes where a
    wider index leads with the column."""
    indexes = _indexes_by_leading_column(table, whole=True).get(column, [])
    assert not ([column] in indexes and any(len(columns) > 1 for columns in indexes))


AUDIT_INDEX = "audit_redirected_entity"
BEFORE_AUDIT_INDEX = ("palace", "0020_foreign_keys_indexed_by_their_composites")
_AUDIT_ROW = (
    "INSERT INTO palace_auditentry (actor_label, created_at, action, target_type, target_id, "
    "data) VALUES ('test', now(), 'review.merge', 'review_item', 'e1', '{}')"
)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="CREATE INDEX CONCURRENTLY")
@pytest.mark.django_db(transaction=True)
def test_the_audit_index_is_built_while_the_audit_log_takes_writes():
    """palace/0021 builds its index CONCURRENTLY: while a write to the audit log is still open,
    the build waits for it, and other writes go on meanwhile (a plain CREATE INDEX would queue
    them behind its own wait)."""
    params = connection.get_connection_params()
    params = {key: value for key, value in params.items() if key != "cursor_factory"}
    built: list[BaseException | None] = []

    def build() -> None:
        try:
            _migrate(("palace", "0021_audit_redirected_entity"))
            built.append(None)
        except BaseException as error:  # reported by the test's thread
            built.append(error)
        finally:
            connection.close()

    builder = threading.Thread(target=build)
    _migrate(BEFORE_AUDIT_INDEX)
    try:
        with psycopg.connect(**params) as open_write, psycopg.connect(**params) as writer:
            open_write.execute(_AUDIT_ROW)  # not committed: the build must wait for it
            builder.start()
            assert _waiting_to_build(writer), "the build never started"
            writer.execute("SET lock_timeout = '3s'")
            writer.execute(_AUDIT_ROW)  # raises LockNotAvailable behind a plain CREATE INDEX
            writer.commit()
            open_write.commit()
            builder.join(60)
        assert built == [None]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE c.relname = %s",
                [AUDIT_INDEX],
            )
            assert cursor.fetchall() == [(True,)]
    finally:
        if builder.is_alive():
            builder.join(60)  # its migration recorded before the latest is asked for
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.migrate(executor.loader.graph.leaf_nodes())


def _waiting_to_build(observer: psycopg.Connection) -> bool:
    """Whether a CREATE INDEX of the audit index is running (waiting), within ten seconds."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        row = observer.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE %s "
            "AND pid <> pg_backend_pid() AND datname = current_database()",
            [f"%CREATE INDEX%{AUDIT_INDEX}%"],
        ).fetchone()
        observer.rollback()
        if row and row[0]:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.django_db(transaction=True)
def test_castellan_imports_made_before_mentions_were_recorded_are_marked():
    """palace/0022: an import made before imports recorded their mentions is marked, so its
    reversal judges its mentions by time (only Castellan files record mentions)."""
    apps = _migrate(("palace", "0021_audit_redirected_entity"))
    Import = apps.get_model("palace", "Import")
    castellan = Import.objects.create(source="a", format="castellan", options={"wing": "w"})
    mempalace = Import.objects.create(source="b", format="mempalace", options={})
    try:
        Import = _migrate(("palace", "0022_import_mentions")).get_model("palace", "Import")
        assert Import.objects.get(pk=castellan.pk).options == {
            "wing": "w",
            "mentions_unrecorded": True,
        }
        assert Import.objects.get(pk=mempalace.pk).options == {}
    finally:
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)  # SQLite rebuilds the table: no transaction around it
def test_checkpoint_ids_per_user_are_not_reversed_while_two_users_share_one():
    """palace/0027 reversed needs ids unique across the store again: refused, naming the id,
    before anything changes; once one is left, reversed and applied again."""
    from django.contrib.auth import get_user_model

    from palace.models import Checkpoint

    def migrate(target):
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate([target])

    users = [get_user_model().objects.create_user(name) for name in ("alice", "bob")]
    for user in users:
        Checkpoint.objects.create(key="session-1", payload_hash="x", created_by=user)
    try:
        with pytest.raises(RuntimeError, match="'session-1' is held by 2 checkpoints"):
            migrate(("palace", "0026_audit_alias_remove_room_delete"))
        Checkpoint.objects.filter(created_by=users[1]).delete()
        migrate(("palace", "0026_audit_alias_remove_room_delete"))
        migrate(("palace", "0027_checkpoint_key_per_user"))
        assert Checkpoint.objects.get().key == "session-1"
    finally:  # the later migrations too, for the tests after this one
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
