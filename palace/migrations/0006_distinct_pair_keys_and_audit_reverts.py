"""A distinct pair holds its two rows by foreign keys of its kind instead of bare ids, and a revert
points at the decision it reverts by a foreign key (filled from `data["reverts"]`).

Pairs naming a row that no longer exists are dropped: they stopped a link to a row that can be
linked to nothing. The reverse carries the ids back."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F

KINDS = (("drawer", "Drawer"), ("entity", "Entity"))
BATCH = 500


def check_keys_now(schema_editor):
    """Check the foreign keys just written now rather than at commit: PostgreSQL cannot alter a
    table with checks pending, and this migration alters the table next."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")


def pairs_to_keys(apps, schema_editor):
    DistinctPair = apps.get_model("palace", "DistinctPair")
    for kind, model in KINDS:
        rows = apps.get_model("palace", model).objects.values("pk")
        pairs = DistinctPair.objects.filter(kind=kind)
        pairs.exclude(low__in=rows, high__in=rows).delete()
        pairs.update(**{f"low_{kind}": F("low"), f"high_{kind}": F("high")})
    check_keys_now(schema_editor)


def keys_to_pairs(apps, schema_editor):
    DistinctPair = apps.get_model("palace", "DistinctPair")
    for kind, _ in KINDS:
        DistinctPair.objects.filter(kind=kind).update(low=F(f"low_{kind}"), high=F(f"high_{kind}"))


def link_reverts(apps, schema_editor):
    AuditEntry = apps.get_model("palace", "AuditEntry")
    reverts = list(AuditEntry.objects.filter(action="review.revert").only("pk", "data"))
    named = {revert.data.get("reverts") for revert in reverts} - {None}
    existing = set(AuditEntry.objects.filter(pk__in=named).values_list("pk", flat=True))
    linked = []
    for revert in reverts:
        if revert.data.get("reverts") in existing:
            revert.reverts_id = revert.data["reverts"]
            linked.append(revert)
    AuditEntry.objects.bulk_update(linked, ["reverts"], batch_size=BATCH)
    check_keys_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0005_entity_alias_source"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="distinctpair", name="distinct_pair_unique"),
        migrations.RemoveConstraint(model_name="distinctpair", name="distinct_pair_ordered"),
        # Nullable while both shapes exist, so the reverse can add them back and fill them.
        migrations.AlterField(
            model_name="distinctpair", name="low", field=models.BigIntegerField(null=True)
        ),
        migrations.AlterField(
            model_name="distinctpair", name="high", field=models.BigIntegerField(null=True)
        ),
        migrations.AddField(
            model_name="distinctpair",
            name="low_drawer",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="palace.drawer",
            ),
        ),
        migrations.AddField(
            model_name="distinctpair",
            name="high_drawer",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="palace.drawer",
            ),
        ),
        migrations.AddField(
            model_name="distinctpair",
            name="low_entity",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="palace.entity",
            ),
        ),
        migrations.AddField(
            model_name="distinctpair",
            name="high_entity",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="palace.entity",
            ),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="reverts",
            field=models.ForeignKey(
                blank=True,
                help_text="On a revert: the decision it reverts.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="reverted_by",
                to="palace.auditentry",
            ),
        ),
        migrations.RunPython(pairs_to_keys, keys_to_pairs),
        migrations.RunPython(link_reverts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="distinctpair", name="low"),
        migrations.RemoveField(model_name="distinctpair", name="high"),
        migrations.AddConstraint(
            model_name="distinctpair",
            constraint=models.UniqueConstraint(
                fields=("low_drawer", "high_drawer"), name="distinct_pair_unique_drawers"
            ),
        ),
        migrations.AddConstraint(
            model_name="distinctpair",
            constraint=models.UniqueConstraint(
                fields=("low_entity", "high_entity"), name="distinct_pair_unique_entities"
            ),
        ),
        migrations.AddConstraint(
            model_name="distinctpair",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("high_entity__isnull", True),
                        ("kind", "drawer"),
                        ("low_drawer__lt", models.F("high_drawer")),
                        ("low_entity__isnull", True),
                    ),
                    models.Q(
                        ("high_drawer__isnull", True),
                        ("kind", "entity"),
                        ("low_drawer__isnull", True),
                        ("low_entity__lt", models.F("high_entity")),
                    ),
                    _connector="OR",
                ),
                name="distinct_pair_ordered_of_its_kind",
            ),
        ),
    ]
