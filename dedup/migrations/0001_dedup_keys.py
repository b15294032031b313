"""Data migration: fill fingerprints and entity keys of rows written before they existed.

It merges nothing and running it twice changes nothing. The reverse is a no-op: the derived
columns are harmless to keep.

A migration is history and imports no live project code, with one exception: the values it
computes come from `dedup.policy`, the pure, Django-free, conformance-tested definition of a
normalised text, a fingerprint and an entity key. Those values are only useful if they equal what
the write path computes for new rows (an old drawer whose fingerprint came from a frozen older
normaliser would never be found as an exact copy), so this migration asks the policy rather than
a frozen copy of it; a change to the policy that changes these values must come with its own
backfill (the `dedup_backfill` command, or a new data migration). The ORM work around the policy
(which rows, in what batches, which columns) is copied here from dedup/backfill.py as it was when
this migration was written, so that a change there cannot change what this migration does.
"""

from django.db import migrations

BATCH_SIZE = 500


def backfill_fingerprints(drawer_model, policy):
    # A drawer with no letter or digit legitimately has no fingerprint; its normalised text is
    # empty too, so it is re-examined each run (cheap, and rare) but never counted as filled.
    queryset = drawer_model.objects.filter(fingerprint__isnull=True, normalized_content="")
    queryset = queryset.order_by("id")
    last_id = 0
    while True:
        batch = list(
            queryset.filter(id__gt=last_id).only("id", "content", "content_hash")[:BATCH_SIZE]
        )
        if not batch:
            return
        for drawer in batch:
            normalized = policy.normalize_text(drawer.content)
            drawer.normalized_content = normalized
            drawer.fingerprint = policy.fingerprint_of_normalized(normalized)
            drawer.content_hash = drawer.content_hash or policy.content_hash(drawer.content)
        changed = [d for d in batch if d.normalized_content]
        drawer_model.objects.bulk_update(
            changed, ["normalized_content", "fingerprint", "content_hash"]
        )
        last_id = batch[-1].id


def backfill_entity_keys(entity_model, alias_model, policy):
    for model, text_field in ((entity_model, "name"), (alias_model, "alias")):
        last_id = 0
        while True:
            batch = list(
                model.objects.filter(key="", id__gt=last_id)
                .order_by("id")
                .only("id", text_field)[:BATCH_SIZE]
            )
            if not batch:
                break
            for row in batch:
                row.key = policy.entity_key(getattr(row, text_field))
                if model is entity_model:
                    row.key_length = len(row.key)
            fields = ["key", "key_length"] if model is entity_model else ["key"]
            model.objects.bulk_update(batch, fields)
            last_id = batch[-1].id


def forward(apps, schema_editor):
    from dedup import policy

    backfill_fingerprints(apps.get_model("palace", "Drawer"), policy)
    backfill_entity_keys(
        apps.get_model("palace", "Entity"), apps.get_model("palace", "EntityAlias"), policy
    )


class Migration(migrations.Migration):
    dependencies = [("palace", "0002_drawer_fulltext")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop, elidable=False)]
