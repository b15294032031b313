"""Foreign keys lose the index of their own where a unique constraint or an index that leads with
the column covers every lookup by it: one index fewer to write per drawer, link, mention and
alias. The state changes as `AlterField` would, but the database only drops the indexes:
`AlterField` would remake each table on SQLite (dropping the full-text triggers of the drawers')
and, on PostgreSQL, drop and re-add each foreign key, validating it over every row while writes
wait (as `sqlmigrate` showed for the `AlterField`s)."""

import django.db.models.deletion
from django.db import migrations, models

# (table, column, the index Django named for the column's foreign key)
INDEXES = [
    ("palace_distinctpair", "low_drawer_id", "palace_distinctpair_low_drawer_id_383299d7"),
    ("palace_distinctpair", "low_entity_id", "palace_distinctpair_low_entity_id_ad072b77"),
    ("palace_drawer", "room_id", "palace_drawer_room_id_4bedbac3"),
    ("palace_drawerlink", "newer_id", "palace_drawerlink_newer_id_c19f1356"),
    ("palace_entityalias", "entity_id", "palace_entityalias_entity_id_489b4663"),
    ("palace_entitylink", "newer_id", "palace_entitylink_newer_id_93d8ce73"),
    ("palace_mention", "drawer_id", "palace_mention_drawer_id_e5ca1b53"),
    ("palace_room", "wing_id", "palace_room_wing_id_3cdd4c29"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0019_entity_key_bands"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{index}"',
                    reverse_sql=f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")',
                )
                for table, column, index in INDEXES
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="distinctpair",
                    name="low_drawer",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="palace.drawer",
                    ),
                ),
                migrations.AlterField(
                    model_name="distinctpair",
                    name="low_entity",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="palace.entity",
                    ),
                ),
                migrations.AlterField(
                    model_name="drawer",
                    name="room",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="drawers",
                        to="palace.room",
                    ),
                ),
                migrations.AlterField(
                    model_name="drawerlink",
                    name="newer",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="links_to_older",
                        to="palace.drawer",
                    ),
                ),
                migrations.AlterField(
                    model_name="entityalias",
                    name="entity",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="alias_set",
                        to="palace.entity",
                    ),
                ),
                migrations.AlterField(
                    model_name="entitylink",
                    name="newer",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="links_to_older",
                        to="palace.entity",
                    ),
                ),
                migrations.AlterField(
                    model_name="mention",
                    name="drawer",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="mentions",
                        to="palace.drawer",
                    ),
                ),
                migrations.AlterField(
                    model_name="room",
                    name="wing",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="rooms",
                        to="palace.wing",
                    ),
                ),
            ],
        ),
    ]
