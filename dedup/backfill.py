"""Fill the derived columns of rows written before they existed: drawers' hashes, normalised text,
fingerprints and index texts, entities' and aliases' keys. Merges nothing; running it twice
changes nothing.

The functions take the model classes, so the data migration can pass its historical models and
the `dedup_backfill` command the current ones: one implementation for both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import connection

from dedup import policy
from dedup.policy.signatures import key_signatures

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from palace.models import Drawer, Entity, EntityAlias

BATCH_SIZE = 500
PERSON_ALIAS_SOURCES = ("api", "curator")  # as palace.models has them; its models may be historical
# Told how many rows a batch held; what it returns is ignored (tqdm's `update` returns a flag).
Progress = Callable[[int], object]


def _noop(_: int) -> None:
    pass


def drawers_needing_backfill(drawer_model: type[Drawer]) -> QuerySet[Drawer]:
    # A drawer with no letter or digit legitimately has no fingerprint; its normalised text is
    # empty too, so it is re-examined each run (cheap, and rare) but never counted as filled.
    return drawer_model.objects.filter(fingerprint__isnull=True, normalized_content="")


def backfill_fingerprints(drawer_model: type[Drawer], *, progress: Progress = _noop) -> int:
    """Returns the number of drawers that gained a fingerprint."""
    filled = 0
    last_id = 0
    queryset = drawers_needing_backfill(drawer_model).order_by("id")
    while True:
        batch = list(
            queryset.filter(id__gt=last_id).only("id", "content", "content_hash")[:BATCH_SIZE]
        )
        if not batch:
            return filled
        for drawer in batch:
            normalized = policy.normalize_text(drawer.content)
            drawer.normalized_content = normalized
            drawer.index_text = policy.index_text(normalized)
            drawer.fingerprint = policy.fingerprint_of_normalized(normalized)
            drawer.content_hash = drawer.content_hash or policy.content_hash(drawer.content)
            filled += drawer.fingerprint is not None
        changed = [d for d in batch if d.normalized_content]
        drawer_model.objects.bulk_update(
            changed, ["normalized_content", "index_text", "fingerprint", "content_hash"]
        )
        progress(len(batch))
        last_id = batch[-1].id


def _may_hold_unspaced() -> tuple[str, str]:
    """A condition on `normalized_content`, and its parameter, true of every text that may have
    an index text (`policy.INDEXED_CHARACTERS`); the policy decides."""
    characters = policy.INDEXED_CHARACTERS
    if connection.vendor == "postgresql":
        return "normalized_content ~ %s", f"[{characters}]"
    return "normalized_content GLOB %s", f"*[{characters}]*"


def drawers_lacking_index_text() -> int:
    """How many drawers `backfill_index_text` looks at: those with no index text whose text may
    need one."""
    condition, pattern = _may_hold_unspaced()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM palace_drawer WHERE index_text IS NULL AND {condition}",
            [pattern],
        )
        return cursor.fetchone()[0]


def backfill_index_text(drawer_model: type[Drawer], *, progress: Progress = _noop) -> int:
    """Give every drawer lacking one the index text the write path gives it
    (`policy.index_text`: a text in a script written without spaces), as dedup/0016 did: for
    drawers a process of the release before wrote while it ran. Returns how many gained one."""
    condition, pattern = _may_hold_unspaced()
    sql = (
        "SELECT id, normalized_content FROM palace_drawer WHERE id > %s AND index_text IS NULL "
        f"AND {condition} ORDER BY id LIMIT %s"
    )
    filled = last_id = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(sql, [last_id, pattern, BATCH_SIZE])
            rows = cursor.fetchall()
        if not rows:
            return filled
        changed = [
            drawer_model(id=pk, index_text=indexed)
            for pk, normalized in rows
            if (indexed := policy.index_text(normalized)) is not None
        ]
        drawer_model.objects.bulk_update(changed, ["index_text"])
        filled += len(changed)
        progress(len(rows))
        last_id = rows[-1][0]


def backfill_entity_keys(
    entity_model: type[Entity], alias_model: type[EntityAlias], *, progress: Progress = _noop
) -> int:
    """Returns the number of entities and aliases that gained a key."""
    filled = 0
    for model, text_field in ((entity_model, "name"), (alias_model, "alias")):
        last_id = 0
        while True:
            batch: list[Any] = list(  # entities or aliases, as `model` is
                model.objects.filter(key="", id__gt=last_id)
                .order_by("id")
                .only("id", text_field, *(() if model is entity_model else ("source",)))[
                    :BATCH_SIZE
                ]
            )
            if not batch:
                break
            for row in batch:
                row.key = policy.entity_key(getattr(row, text_field))
                if model is entity_model:
                    row.key_length = len(row.key)
            fields = ["key", "key_length"] if model is entity_model else ["key"]
            model.objects.bulk_update(batch, fields)
            _index_keys(model, batch, entity=model is entity_model)
            filled += len(batch)
            progress(len(batch))
            last_id = batch[-1].id
    return filled


def recompute_signatures(
    entity_model: type[Entity], alias_model: type[EntityAlias], *, progress: Progress = _noop
) -> int:
    """Every entity's and person-recorded alias's signatures computed again from its key, as
    `dedup.services` writes them: for rows a process of an earlier release wrote in the form
    before while dedup/0011 ran (or any a bug left out). In the caller's transaction, which
    should hold it whole: lookups meanwhile see the index before or after, never half. Returns
    the number of owners indexed."""
    apps = entity_model._meta.apps
    postgresql = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        if postgresql:  # TRUNCATE refuses a table with foreign key checks still deferred
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for name in ("EntitySignature", "EntityAliasSignature"):
            table = apps.get_model("palace", name)._meta.db_table
            # TRUNCATE on PostgreSQL: a DELETE would leave the old rows dead beside the new.
            cursor.execute(f"{'TRUNCATE' if postgresql else 'DELETE FROM'} {table}")
    indexed = 0
    for model, entity in ((entity_model, True), (alias_model, False)):
        owners: Any = model.objects.exclude(key="")
        if not entity:
            owners = owners.filter(source__in=PERSON_ALIAS_SOURCES)
        last_id = 0
        while True:
            batch = list(
                owners.filter(id__gt=last_id)
                .order_by("id")
                .only("id", "key", *(() if entity else ("source",)))[:BATCH_SIZE]
            )
            if not batch:
                break
            _index_keys(model, batch, entity=entity)
            indexed += len(batch)
            progress(len(batch))
            last_id = batch[-1].id
    return indexed


def signature_owners(entity_model: type[Entity], alias_model: type[EntityAlias]) -> int:
    """How many rows `recompute_signatures` indexes (for a progress bar)."""
    people = alias_model.objects.exclude(key="").filter(source__in=PERSON_ALIAS_SOURCES)
    return entity_model.objects.exclude(key="").count() + people.count()


def _index_keys(model: type[Entity] | type[EntityAlias], rows: list[Any], *, entity: bool) -> None:
    """The signatures of the keys just filled (an entity's, or an alias's a person recorded), so
    the typo and resemblance lookups find them, as `dedup.services` writes them for new rows."""
    apps = model._meta.apps  # the migration's historical models, or the current ones
    signature_model: Any  # a historical model class or the current one
    if entity:
        signature_model = apps.get_model("palace", "EntitySignature")
        owned = [("entity_id", row) for row in rows]
    else:
        signature_model = apps.get_model("palace", "EntityAliasSignature")
        owned = [("alias_id", row) for row in rows if row.source in PERSON_ALIAS_SOURCES]
    # The owner's key beside each signature, once the schema has it (palace/0012).
    keyed = any(f.name == "key" for f in signature_model._meta.get_fields())
    signature_model.objects.bulk_create(
        (
            signature_model(
                signature=signature, **{field: row.id}, **({"key": row.key} if keyed else {})
            )
            for field, row in owned
            for signature in key_signatures(row.key)
        ),
        ignore_conflicts=True,
    )
