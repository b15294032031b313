"""The review queue's bulk fill (bench/review_queue.py): the rows the services write for drawer
links and entity links, made from the same policy and inserted by bulk SQL, and a check that they
equal the services' rows for the same texts, field by field."""

from __future__ import annotations

import itertools
import random
import uuid

from bench._common import Vocabulary, one_typo
from bench._entity_fill import entity_name, insert, typo

CHUNK = 50_000
KIND = "person"
ROOMS = 10


class Texts:
    """Pairs of texts (older, newer) the write path links, and pairs of entity names."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        vocabulary = Vocabulary(rng)
        self.words = vocabulary.words
        self.cumulative = list(itertools.accumulate(vocabulary.weights))
        self.common = vocabulary.common
        self.taken: set[str] = set()

    def sentence(self) -> str:
        """`Vocabulary.sentence`, with the weights accumulated once instead of per call."""
        rng = self.rng
        picks = rng.choices(self.words, cum_weights=self.cumulative, k=rng.randint(14, 28))
        words = [w if rng.random() > 0.3 else rng.choice(self.common) for w in picks]
        return (" ".join(words)).capitalize() + "."

    def drawer_pair(self) -> tuple[str, str]:
        older = self.sentence()
        while not any(len(word.strip(".")) >= 5 for word in older.split(" ")):
            older = self.sentence()  # a typo needs a word of five letters or more
        if self.rng.random() < 0.1:  # the same words, other case and punctuation: "normalized"
            return older, older.upper().rstrip(".") + "!"
        return older, one_typo(older, self.rng)

    def entity_pair(self) -> tuple[str, str]:
        while True:
            older = entity_name(self.rng)
            if older.count(" ") != 2:  # three words: no other name is within two edits
                continue
            newer = typo(older, self.rng, 2)
            if not {older, newer} & self.taken and older != newer:
                self.taken |= {older, newer}
                return older, newer


def new_drawer(drawer_id: int, room_id: int, content: str, now):
    """A new drawer as `dedup.services.drawer_write` builds it."""
    from dedup import policy
    from palace.models import Drawer

    text = policy.Text.of(content)
    return Drawer(
        id=drawer_id,
        uuid=uuid.uuid4(),
        room_id=room_id,
        content=content,
        content_hash=text.content_hash,
        normalized_content=text.normalized,
        index_text=policy.index_text(text.normalized),
        fingerprint=text.fingerprint,
        valid_from=now,
        created_at=now,
    )


def _fields(model) -> list:
    return list(model._meta.local_concrete_fields)


def _columns(model) -> tuple[str, ...]:
    return tuple(f.column for f in _fields(model))


def _connection():
    """The default connection itself (not its proxy, looked up again at every attribute)."""
    from django.db import DEFAULT_DB_ALIAS, connections

    return connections[DEFAULT_DB_ALIAS]


def _prepared(instance) -> list:
    """A row's values as the ORM (and `drawer_insert`) store them."""
    connection = _connection()
    return [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in _fields(instance)]


def drawer_link(link_id: int, older: tuple[int, str], newer: tuple[int, str], now):
    """The link `drawer_write` stores from the newer text to the older one."""
    from django.conf import settings

    from dedup import policy
    from palace.models import DrawerLink

    threshold = settings.CASTELLAN_DEDUP_NEAR_THRESHOLD
    assessment = policy.assess(
        policy.Text.of(newer[1]), policy.Text.of(older[1]), threshold=threshold
    )
    assert assessment.verdict is not None, (older, newer)
    return DrawerLink(
        id=link_id,
        newer_id=newer[0],
        older_id=older[0],
        verdict=assessment.verdict,
        similarity=assessment.signals.similarity,
        signals=assessment.signals.as_dict(),
        created_at=now,
    )


def entity_rows(entity_id: int, name: str, now):
    """An entity `entity_resolve` creates, and its signature rows (`signatures_insert`)."""
    from dedup import policy
    from dedup.policy.signatures import key_signatures
    from palace.models import Entity

    key = policy.entity_key(name)
    entity = Entity(
        id=entity_id, name=name, kind=KIND, key=key, key_length=len(key), created_at=now
    )
    return entity, [(signature, entity_id, key) for signature in key_signatures(key)]


def entity_link(link_id: int, older: tuple[int, str], newer: tuple[int, str], now):
    """The possibly_same_as link `entity_resolve` stores for a new name two edits away."""
    from dedup import policy
    from palace.models import EntityLink

    known = policy.EntityCandidate(id=older[0], name=older[1], kind=KIND, age=older[0])
    resolution = policy.resolve(newer[1], KIND, [known], fuzzy=True)
    if resolution.rule != policy.Rule.DISTINCT or len(resolution.possible) != 1:
        return None
    match = resolution.possible[0]
    return EntityLink(
        id=link_id,
        newer_id=newer[0],
        older_id=older[0],
        similarity=match.similarity,
        distance=match.distance,
        created_at=now,
    )


# --- the fill --------------------------------------------------------------------------------


def _next_id(model) -> int:
    last = model.objects.order_by("-id").values_list("id", flat=True).first()
    return (last or 0) + 1


class _Rows:
    """Rows of one model as the ORM stores them, made fast: the values every row of a chunk
    shares (defaults, the time) are prepared once from a template instance, the others per row
    by their model field, as `drawer_insert` prepares them."""

    def __init__(self, template, varying: tuple[str, ...]):
        fields = _fields(template)
        self.template = _prepared(template)
        self.varying = [(i, f) for i, f in enumerate(fields) if f.attname in varying]
        assert len(self.varying) == len(varying), varying
        self.rows: list[list] = []

    def add(self, **values) -> None:
        connection = _connection()
        row = self.template.copy()
        for i, field in self.varying:
            row[i] = field.get_db_prep_save(values[field.attname], connection)
        self.rows.append(row)


DRAWER_VARYING = tuple("id uuid room_id content content_hash normalized_content".split())
DRAWER_VARYING += ("index_text", "fingerprint")
LINK_VARYING = ("id", "newer_id", "older_id", "verdict", "similarity", "signals")


def drawer_chunk(pairs: list[tuple[str, str, int]], ids: dict) -> tuple[list, list]:
    """The drawers (older, newer) of each pair of texts in its room, and the newer's link to the
    older, as prepared rows; `ids` gives the next ids and is moved past them."""
    from django.conf import settings
    from django.utils import timezone

    from dedup import policy

    now = timezone.now()
    drawers = _Rows(new_drawer(0, 0, "", now), DRAWER_VARYING)
    links = _Rows(drawer_link(0, (0, "a"), (0, "a"), now), LINK_VARYING)
    threshold = settings.CASTELLAN_DEDUP_NEAR_THRESHOLD
    for older_content, newer_content, room in pairs:
        texts = [policy.Text.of(older_content), policy.Text.of(newer_content)]
        for offset, (content, text) in enumerate(
            zip((older_content, newer_content), texts, strict=True)
        ):
            drawers.add(
                id=ids["drawer"] + offset,
                uuid=uuid.uuid4(),
                room_id=room,
                content=content,
                content_hash=text.content_hash,
                normalized_content=text.normalized,
                index_text=policy.index_text(text.normalized),
                fingerprint=text.fingerprint,
            )
        assessment = policy.assess(texts[1], texts[0], threshold=threshold)
        assert assessment.verdict is not None, (older_content, newer_content)
        links.add(
            id=ids["drawer_link"],
            newer_id=ids["drawer"] + 1,
            older_id=ids["drawer"],
            verdict=assessment.verdict,
            similarity=assessment.signals.similarity,
            signals=assessment.signals.as_dict(),
        )
        ids["drawer"] += 2
        ids["drawer_link"] += 1
    return drawers.rows, links.rows


def entity_chunk(texts: Texts, count: int, ids: dict) -> tuple[list, list, list]:
    """`count` entity links with their two entities each and the entities' signatures."""
    from django.utils import timezone

    now = timezone.now()
    entities: list[list] = []
    signatures: list[tuple[int, int]] = []
    links: list[list] = []
    while len(links) < count:
        older_name, newer_name = texts.entity_pair()
        older, newer = (ids["entity"], older_name), (ids["entity"] + 1, newer_name)
        link = entity_link(ids["entity_link"], older, newer, now)
        if link is None:  # the write path would converge, or link nothing: not a queue item
            continue
        ids["entity"] += 2
        ids["entity_link"] += 1
        for entity_id, name in (older, newer):
            entity, rows = entity_rows(entity_id, name, now)
            entities.append(_prepared(entity))
            signatures += rows
        links.append(_prepared(link))
    return entities, signatures, links


def grow(target: int, present: int, texts: Texts, rooms: list[int]) -> None:
    """Add open items up to `target`: nine drawer links for each entity link."""
    from django.db import connection, transaction

    from palace import fulltext
    from palace.models import Drawer, DrawerLink, Entity, EntityLink, EntitySignature

    need = target - present
    entity_links = need // 10
    ids = {
        "drawer": _next_id(Drawer),
        "drawer_link": _next_id(DrawerLink),
        "entity": _next_id(Entity),
        "entity_link": _next_id(EntityLink),
    }
    # The full-text index is built once after the load, as the migrations build it over a
    # filled table (SQLite: the table and triggers again, then 'rebuild'; PostgreSQL: the GIN
    # index): the same index as rows inserted one by one make, in a fraction of the time.
    vendor = connection.vendor
    with connection.cursor() as cursor:
        for statement in {"sqlite": fulltext.SQLITE_REMOVE}.get(vendor, fulltext.POSTGRESQL_REMOVE):
            cursor.execute(statement)
    for start in range(0, need - entity_links, CHUNK):
        count = min(CHUNK, need - entity_links - start)
        pairs = [(*texts.drawer_pair(), texts.rng.choice(rooms)) for _ in range(count)]
        drawers, links = drawer_chunk(pairs, ids)
        with transaction.atomic():
            insert(Drawer._meta.db_table, _columns(Drawer), drawers)
            insert(DrawerLink._meta.db_table, _columns(DrawerLink), links)
    for start in range(0, entity_links, CHUNK):
        entities, signatures, links = entity_chunk(texts, min(CHUNK, entity_links - start), ids)
        with transaction.atomic():
            insert(Entity._meta.db_table, _columns(Entity), entities)
            insert(EntitySignature._meta.db_table, ("signature", "entity_id", "key"), signatures)
            insert(EntityLink._meta.db_table, _columns(EntityLink), links)
    with connection.cursor() as cursor:
        for statement in {"sqlite": fulltext.SQLITE}.get(vendor, fulltext.POSTGRESQL):
            cursor.execute(statement)
        cursor.execute("ANALYZE")
    sync_sequences(Drawer, DrawerLink, Entity, EntityLink)


def sync_sequences(*models) -> None:
    """PostgreSQL: the id sequences past the ids the bulk rows took (SQLite needs nothing)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            table_name = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table_name}', 'id'), "
                f"(SELECT max(id) FROM {table_name}))"
            )


# --- the bulk rows against the services' ---------------------------------------------------


class _Undo(Exception):
    """Raised to roll the equivalence check's writes back."""


def _same(made, written, skip: set[str]) -> None:
    _same_row(type(made), _prepared(made), written, skip)


def _same_row(model, row: list, written, skip: set[str]) -> None:
    """Field by field, but the ids and times each write chooses."""
    for field, bulk, service in zip(_fields(model), row, _prepared(written), strict=True):
        if field.attname not in skip:
            # (psycopg's Jsonb wrapper compares by identity: its object is what it stores)
            bulk, service = getattr(bulk, "obj", bulk), getattr(service, "obj", service)
            assert bulk == service, (model.__name__, field.attname, bulk, service)


def check_equivalence(texts: Texts) -> None:
    """Bulk-made rows equal the services' for the same texts (then everything is rolled back)."""
    from django.db import transaction

    from dedup import services

    try:
        with transaction.atomic():
            room = services.room_get_or_create(wing="equivalence", room="check")
            for _ in range(5):
                _check_drawers(texts, room)
                _check_entities(texts)
            _check_fulltext()
            raise _Undo
    except _Undo:
        pass


def _check_drawers(texts: Texts, room) -> None:
    """The fill's rows for a pair of texts against the rows `drawer_write` stores for them."""
    from dedup import services
    from palace.models import Drawer, DrawerLink

    older_text, newer_text = texts.drawer_pair()
    older = services.drawer_write(room=room, content=older_text).drawer
    written = services.drawer_write(room=room, content=newer_text)
    assert len(written.links) == 1, written
    ids = {"drawer": _next_id(Drawer), "drawer_link": _next_id(DrawerLink)}
    drawers, links = drawer_chunk([(older_text, newer_text, room.id)], ids)
    times = {"id", "uuid", "valid_from", "created_at"}
    _same_row(Drawer, drawers[0], older, times)
    _same_row(Drawer, drawers[1], written.drawer, times)
    _same_row(DrawerLink, links[0], written.links[0], {"id", "newer_id", "older_id", "created_at"})
    # and they go in beside them, through the same INSERT the fill uses
    insert(Drawer._meta.db_table, _columns(Drawer), drawers)
    insert(DrawerLink._meta.db_table, _columns(DrawerLink), links)
    sync_sequences(Drawer, DrawerLink)


def _check_entities(texts: Texts) -> None:
    from django.utils import timezone

    from dedup import services
    from palace.models import EntitySignature

    while True:
        older_name, newer_name = texts.entity_pair()
        made = entity_link(0, (0, older_name), (1, newer_name), timezone.now())
        if made is not None:
            break
    older = services.entity_resolve(name=older_name, kind=KIND).entity
    resolved = services.entity_resolve(name=newer_name, kind=KIND)
    assert resolved.created and len(resolved.possible) == 1, resolved
    _same(made, resolved.possible[0], {"id", "newer_id", "older_id", "created_at"})
    for entity in (older, resolved.entity):
        bulk, signatures = entity_rows(entity.id, entity.name, timezone.now())
        _same(bulk, entity, {"uuid", "created_at"})
        stored = EntitySignature.objects.filter(entity=entity).values_list(
            "signature", "entity", "key"
        )
        assert set(stored) == set(signatures), entity


def _check_fulltext() -> None:
    """SQLite: the full-text table holds what its content table says (FTS5's own check)."""
    from django.db import connection

    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('integrity-check')"
            )
