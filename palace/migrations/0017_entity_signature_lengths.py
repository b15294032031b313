"""Each entity and alias signature beside its key's length, the second column of the lookup
index, so a lookup bounds the lengths inside the index (dedup.policy.signatures: the tags no
longer carry the length, and a lookup asks a third as many signatures).

The signatures change form with this: forwards, the tables are emptied and rebuilt, and
dedup/0011 computes every signature again (they are derived from the keys; the pure policy is
dedup's, which palace does not import). Backwards, the rows are kept without their length, and
dedup/0011's reverse has by then put back the signatures of the form before.

PostgreSQL: the primary key (signature, key_length, owner) INCLUDEs the key, as palace/0012's
did. SQLite: the table is rebuilt WITHOUT ROWID with that primary key. Django models neither
covering form: a later AlterField on these tables would rebuild them without it (on SQLite) and
must repeat this.
"""

from django.db import migrations, models

TABLES = (
    # table, owner column, owner table
    ("palace_entitysignature", "entity_id", "palace_entity"),
    ("palace_entityaliassignature", "alias_id", "palace_entityalias"),
)


def _postgresql_forward(cursor, table, owner, owner_table):
    cursor.execute(f"TRUNCATE {table}")
    cursor.execute(
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
        'ADD COLUMN key_length smallint NOT NULL CHECK ("key_length" >= 0), '
        f"ADD CONSTRAINT {table}_pkey PRIMARY KEY (signature, key_length, {owner}) INCLUDE (key)"
    )


def _postgresql_backward(cursor, table, owner, owner_table):
    cursor.execute(
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, DROP COLUMN key_length, "
        f"ADD CONSTRAINT {table}_pkey PRIMARY KEY (signature, {owner}) INCLUDE (key)"
    )


def _sqlite_rebuild(cursor, table, owner, owner_table, *, lengths: bool):
    cursor.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s AND sql LIKE %s",
        [table, f'%("{owner}")'],
    )
    owner_index = cursor.fetchone()[0]
    length_column = (
        '"key_length" smallint unsigned NOT NULL CHECK ("key_length" >= 0), ' if lengths else ""
    )
    primary_key = f'"signature", "key_length", "{owner}"' if lengths else f'"signature", "{owner}"'
    cursor.execute(
        f'CREATE TABLE "new__{table}" ("signature" bigint NOT NULL, {length_column}'
        f'"{owner}" bigint NOT NULL REFERENCES "{owner_table}" ("id") DEFERRABLE INITIALLY '
        f'DEFERRED, "key" varchar(200) NOT NULL, PRIMARY KEY ({primary_key})) WITHOUT ROWID'
    )
    if not lengths:  # backwards: the rows of the form before, which dedup/0011 put back
        cursor.execute(
            f'INSERT OR IGNORE INTO "new__{table}" (signature, "{owner}", key) '
            f'SELECT signature, "{owner}", key FROM "{table}"'
        )
    cursor.execute(f'DROP TABLE "{table}"')
    cursor.execute(f'ALTER TABLE "new__{table}" RENAME TO "{table}"')
    cursor.execute(f'CREATE INDEX "{owner_index}" ON "{table}" ("{owner}")')


def forward(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for table, owner, owner_table in TABLES:
            if schema_editor.connection.vendor == "postgresql":
                _postgresql_forward(cursor, table, owner, owner_table)
            else:
                _sqlite_rebuild(cursor, table, owner, owner_table, lengths=True)


def backward(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for table, owner, owner_table in TABLES:
            if schema_editor.connection.vendor == "postgresql":
                _postgresql_backward(cursor, table, owner, owner_table)
            else:
                _sqlite_rebuild(cursor, table, owner, owner_table, lengths=False)


def _primary_key(owner: str) -> models.CompositePrimaryKey:
    return models.CompositePrimaryKey(
        "signature", "key_length", owner, blank=True, editable=False, primary_key=True,
        serialize=False,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0016_queue_uncertain_order"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="entityaliassignature",
                    name="key_length",
                    field=models.PositiveSmallIntegerField(default=0),
                    preserve_default=False,
                ),
                migrations.AddField(
                    model_name="entitysignature",
                    name="key_length",
                    field=models.PositiveSmallIntegerField(default=0),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name="entityaliassignature", name="pk", field=_primary_key("alias")
                ),
                migrations.AlterField(
                    model_name="entitysignature", name="pk", field=_primary_key("entity")
                ),
            ],
            database_operations=[migrations.RunPython(forward, backward, elidable=False)],
        ),
    ]
