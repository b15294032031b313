"""A proposal holds its pair, and the link applying it made, by foreign keys of its kind instead
of bare ids. A side or link that no longer exists is left empty, as deleting it now does.

The reverse carries the ids back; a proposal with a side gone cannot be held by the old shape (it
had no id to put there) and is dropped."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F, Q

KINDS = (("drawer", "Drawer", "DrawerLink"), ("entity", "Entity", "EntityLink"))
SIDES = ("newer", "older")


def check_keys_now(schema_editor):
    """Check the foreign keys just written now rather than at commit: PostgreSQL cannot alter a
    table with checks pending, and this migration alters the table next."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")


def ids_to_keys(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    for kind, model, link_model in KINDS:
        proposals = Proposal.objects.filter(kind=kind)
        rows = apps.get_model("palace", model).objects.values("pk")
        for side in SIDES:
            proposals.filter(**{f"{side}_id__in": rows}).update(
                **{f"{side}_{kind}": F(f"{side}_id")}
            )
        links = apps.get_model("palace", link_model).objects.values("pk")
        proposals.filter(applied_link__in=links).update(
            **{f"applied_{kind}_link": F("applied_link")}
        )
    check_keys_now(schema_editor)


def keys_to_ids(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    for kind, _, _ in KINDS:
        proposals = Proposal.objects.filter(kind=kind)
        proposals.filter(
            Q(**{f"newer_{kind}__isnull": True}) | Q(**{f"older_{kind}__isnull": True})
        ).delete()
        proposals.update(
            newer_id=F(f"newer_{kind}"),
            older_id=F(f"older_{kind}"),
            applied_link=F(f"applied_{kind}_link"),
        )


def key(to):
    return models.ForeignKey(
        blank=True,
        null=True,
        on_delete=django.db.models.deletion.SET_NULL,
        related_name="+",
        to=to,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0006_distinct_pair_keys_and_audit_reverts"),
        ("review", "0002_sample_verdicts"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="proposal", name="proposal_unique_pair"),
        # Nullable while both shapes exist, so the reverse can add them back and fill them.
        migrations.AlterField(
            model_name="proposal", name="newer_id", field=models.BigIntegerField(null=True)
        ),
        migrations.AlterField(
            model_name="proposal", name="older_id", field=models.BigIntegerField(null=True)
        ),
        migrations.AddField(model_name="proposal", name="newer_drawer", field=key("palace.drawer")),
        migrations.AddField(model_name="proposal", name="older_drawer", field=key("palace.drawer")),
        migrations.AddField(model_name="proposal", name="newer_entity", field=key("palace.entity")),
        migrations.AddField(model_name="proposal", name="older_entity", field=key("palace.entity")),
        migrations.AddField(
            model_name="proposal", name="applied_drawer_link", field=key("palace.drawerlink")
        ),
        migrations.AddField(
            model_name="proposal", name="applied_entity_link", field=key("palace.entitylink")
        ),
        migrations.RunPython(ids_to_keys, keys_to_ids),
        migrations.RemoveField(model_name="proposal", name="newer_id"),
        migrations.RemoveField(model_name="proposal", name="older_id"),
        migrations.RemoveField(model_name="proposal", name="applied_link"),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.UniqueConstraint(
                fields=("newer_drawer", "older_drawer"), name="proposal_unique_drawer_pair"
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.UniqueConstraint(
                fields=("newer_entity", "older_entity"), name="proposal_unique_entity_pair"
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("applied_entity_link__isnull", True),
                        ("kind", "drawer"),
                        ("newer_entity__isnull", True),
                        ("older_entity__isnull", True),
                    ),
                    models.Q(
                        ("applied_drawer_link__isnull", True),
                        ("kind", "entity"),
                        ("newer_drawer__isnull", True),
                        ("older_drawer__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="proposal_sides_of_its_kind",
            ),
        ),
    ]
