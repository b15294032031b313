"""Where each entity alias came from. Only an alias a person recorded serves the typo rule.

Existing rows are `convergence` unless the audit log shows a person added them: an
`entity.alias_add` row (the API's alias route) or a `review.add_alias` decision that recorded the
alias and was not reverted (a revert deleted that alias; a row of the same spelling now was
recorded by a later convergence). The reverse drops the column: nothing else changed.
"""

from django.db import migrations, models

CONVERGENCE, API, CURATOR = "convergence", "api", "curator"


def people_recorded(AuditEntry, Entity):
    """(entity id, alias) -> source, for every alias the audit log shows a person added."""
    reverted = {
        data.get("reverts")
        for data in AuditEntry.objects.filter(action="review.revert")
        .values_list("data", flat=True)
        .iterator()
    }
    found = {}
    decisions = AuditEntry.objects.filter(action="review.add_alias").values_list("pk", "after")
    for pk, after in decisions.iterator():
        after = after or {}
        if pk not in reverted and after.get("alias_added") and after.get("canonical"):
            found[(after["canonical"], after["alias_added"])] = CURATOR
    by_uuid = {}
    added = AuditEntry.objects.filter(action="entity.alias_add").values_list("target_id", "data")
    for target_id, data in added.iterator():
        if target_id not in by_uuid:
            entity = Entity.objects.filter(uuid=target_id).values_list("pk", flat=True).first()
            by_uuid[target_id] = entity
        if by_uuid[target_id] is not None and (data or {}).get("alias"):
            found[(by_uuid[target_id], data["alias"])] = API
    return found


def mark_aliases_people_recorded(apps, schema_editor):
    AuditEntry = apps.get_model("palace", "AuditEntry")
    Entity = apps.get_model("palace", "Entity")
    EntityAlias = apps.get_model("palace", "EntityAlias")
    for (entity_id, alias), source in people_recorded(AuditEntry, Entity).items():
        EntityAlias.objects.filter(entity_id=entity_id, alias=alias).update(source=source)


class Migration(migrations.Migration):
    dependencies = [
        ("palace", "0004_audit_actions_named"),
    ]

    operations = [
        migrations.AddField(
            model_name="entityalias",
            name="source",
            field=models.CharField(
                choices=[
                    ("convergence", "a sighting that converged"),
                    ("api", "a person, through the API"),
                    ("curator", "a curator's add_alias decision"),
                ],
                default="convergence",
                max_length=16,
            ),
        ),
        migrations.RunPython(mark_aliases_people_recorded, migrations.RunPython.noop),
    ]
