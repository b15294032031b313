"""Data migration: the signatures of every entity's key and of every alias a person recorded,
so the typo and resemblance lookups find the entities stored before the index existed.

Like dedup/0001, it asks the pure `dedup.policy` for the values rather than a frozen copy: a
signature is only useful if it equals what the write path computes for new rows. The ORM work
around it (which rows, in what batches) is held here. Running it twice changes nothing (existing
signatures are skipped); the reverse removes them all.
"""

from django.db import migrations

BATCH_SIZE = 2000
PERSON_ALIAS_SOURCES = ("api", "curator")


def _fill(queryset, signature_model, owner_field, key_field, signatures):
    last_id = 0
    while True:
        batch = list(
            queryset.filter(id__gt=last_id).order_by("id").values_list("id", key_field)[:BATCH_SIZE]
        )
        if not batch:
            return
        signature_model.objects.bulk_create(
            (
                signature_model(signature=signature, **{owner_field: owner})
                for owner, key in batch
                if key
                for signature in signatures(key)
            ),
            batch_size=5000,
            ignore_conflicts=True,
        )
        last_id = batch[-1][0]


def forward(apps, schema_editor):
    from dedup.policy.signatures import key_signatures

    entity_model = apps.get_model("palace", "Entity")
    alias_model = apps.get_model("palace", "EntityAlias")
    _fill(
        entity_model.objects.all(),
        apps.get_model("palace", "EntitySignature"),
        "entity_id",
        "key",
        key_signatures,
    )
    _fill(
        alias_model.objects.filter(source__in=PERSON_ALIAS_SOURCES),
        apps.get_model("palace", "EntityAliasSignature"),
        "alias_id",
        "key",
        key_signatures,
    )


def backward(apps, schema_editor):
    apps.get_model("palace", "EntitySignature").objects.all().delete()
    apps.get_model("palace", "EntityAliasSignature").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("dedup", "0003_candidates_function_length_band"),
        ("palace", "0010_entity_signatures"),
    ]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
