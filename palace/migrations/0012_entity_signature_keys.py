"""The owner's key beside each entity and alias signature, covered by the lookup index, so the
typo and resemblance lookups read (owner, key) from the index alone and keep only the owners
within two edits before reading any entity (dedup.candidates.entities).

PostgreSQL: the primary key (signature, owner) INCLUDEs the key (an index-only scan). SQLite: the
table becomes WITHOUT ROWID, so its primary key is the table and holds the key. The filling is
plain SQL here (the owner's key, which never changes once written). Django does not model either
covering form: a later AlterField on these tables would rebuild them without it (on SQLite) and
must repeat this.
"""

from django.db import migrations, models

TABLES = (
    # table, owner column, owner table
    ("palace_entitysignature", "entity_id", "palace_entity"),
    ("palace_entityaliassignature", "alias_id", "palace_entityalias"),
)


def _postgresql(cursor, table, owner, owner_table, covering):
    cursor.execute(
        f"UPDATE {table} AS s SET key = o.key FROM {owner_table} AS o WHERE o.id = s.{owner}"
    )
    include = " INCLUDE (key)" if covering else ""
    cursor.execute(
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
        f"ADD CONSTRAINT {table}_pkey PRIMARY KEY (signature, {owner}){include}"
    )


def _sqlite(cursor, table, owner, owner_table, covering):
    cursor.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s AND sql LIKE %s",
        [table, f'%("{owner}")'],
    )
    owner_index = cursor.fetchone()[0]
    cursor.execute(
        f'CREATE TABLE "new__{table}" ("signature" bigint NOT NULL, "{owner}" bigint NOT NULL '
        f'REFERENCES "{owner_table}" ("id") DEFERRABLE INITIALLY DEFERRED, '
        f'"key" varchar(200) NOT NULL, PRIMARY KEY ("signature", "{owner}"))'
        + (" WITHOUT ROWID" if covering else "")
    )
    cursor.execute(
        f'INSERT INTO "new__{table}" (signature, "{owner}", key) SELECT s.signature, s."{owner}", '
        f'coalesce((SELECT o.key FROM "{owner_table}" o WHERE o.id = s."{owner}"), \'\') '
        f'FROM "{table}" s'
    )
    cursor.execute(f'DROP TABLE "{table}"')
    cursor.execute(f'ALTER TABLE "new__{table}" RENAME TO "{table}"')
    cursor.execute(f'CREATE INDEX "{owner_index}" ON "{table}" ("{owner}")')


def _cover(schema_editor, covering):
    rebuild = _postgresql if schema_editor.connection.vendor == "postgresql" else _sqlite
    with schema_editor.connection.cursor() as cursor:
        for table, owner, owner_table in TABLES:
            rebuild(cursor, table, owner, owner_table, covering)


def forward(apps, schema_editor):
    _cover(schema_editor, covering=True)


def backward(apps, schema_editor):
    _cover(schema_editor, covering=False)


class Migration(migrations.Migration):
    # After dedup/0004 filled the signatures (its historical models have no key): a store is
    # migrated in this order, and a rollback of dedup/0004 takes this one back first.
    dependencies = [
        ("palace", "0011_drawer_fulltext_room"),
        ("dedup", "0005_candidates_function_bounded"),
    ]

    operations = [
        migrations.AddField(
            model_name="entityaliassignature",
            name="key",
            field=models.CharField(default="", max_length=200),
        ),
        migrations.AddField(
            model_name="entitysignature",
            name="key",
            field=models.CharField(default="", max_length=200),
        ),
        migrations.RunPython(forward, backward, elidable=False),
    ]
