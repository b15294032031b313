"""The foreign keys that a unique constraint or an index leads with lose their own index, as in
palace 0020 (which says why the state and the database change apart): one index fewer each to
write per proposal a sweep stores."""

import django.db.models.deletion
from django.db import migrations, models

# (table, column, the index Django named for the column's foreign key)
INDEXES = [
    ("review_proposal", "newer_drawer_id", "review_proposal_newer_drawer_id_c041fe75"),
    ("review_proposal", "newer_entity_id", "review_proposal_newer_entity_id_ae913ff4"),
    ("review_proposal", "run_id", "review_proposal_run_id_8d820deb"),
    ("review_sweeppart", "run_id", "review_sweeppart_run_id_06bda81d"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0020_foreign_keys_indexed_by_their_composites"),
        ("review", "0007_one_unfinished_sweep_per_scope"),
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
                    model_name="proposal",
                    name="newer_drawer",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="palace.drawer",
                    ),
                ),
                migrations.AlterField(
                    model_name="proposal",
                    name="newer_entity",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="palace.entity",
                    ),
                ),
                migrations.AlterField(
                    model_name="proposal",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="proposals",
                        to="review.sweeprun",
                    ),
                ),
                migrations.AlterField(
                    model_name="sweeppart",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="parts",
                        to="review.sweeprun",
                    ),
                ),
            ],
        ),
    ]
