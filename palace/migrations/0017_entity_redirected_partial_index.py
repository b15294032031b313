"""The entities' `redirect_to` indexed only where it is set (`entity_redirected`).

Nearly every entity redirects nowhere. Its foreign key's full index held them all under NULL, and
SQLite's ANALYZE counts NULL as one value, so it told the planner that any one `redirect_to_id`
matches every entity: the entities merged into one (read for each entity shown, and for every
mention's answer) were read by scanning the whole table, 120 ms at 1,000,000 entities. A partial
index holds only the redirected ones and is used (PostgreSQL, whose statistics count NULLs apart,
planned well either way; its index also shrinks to the redirected entities).

The old index's name is Django's for that column (the same on both databases); the statements
are written here so the 1,000,000-row table is not rebuilt (SQLite's AlterField would copy it).
"""

import django.db.models.deletion
from django.db import migrations, models

OLD_INDEX = "palace_entity_redirect_to_id_8c46b71b"
FORWARD = [
    f'DROP INDEX "{OLD_INDEX}"',  # named so on both databases: fails loudly if it is not
    'CREATE INDEX "entity_redirected" ON "palace_entity" ("redirect_to_id") '
    'WHERE "redirect_to_id" IS NOT NULL',
]
BACKWARD = [
    'DROP INDEX "entity_redirected"',
    f'CREATE INDEX "{OLD_INDEX}" ON "palace_entity" ("redirect_to_id")',
]


class Migration(migrations.Migration):
    dependencies = [("palace", "0016_queue_uncertain_order")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, BACKWARD)],
            state_operations=[
                migrations.AlterField(
                    model_name="entity",
                    name="redirect_to",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="redirected_from",
                        to="palace.entity",
                    ),
                ),
                migrations.AddIndex(
                    model_name="entity",
                    index=models.Index(
                        condition=models.Q(("redirect_to__isnull", False)),
                        fields=["redirect_to"],
                        name="entity_redirected",
                    ),
                ),
            ],
        )
    ]
