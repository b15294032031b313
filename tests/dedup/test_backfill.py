import pytest
from django.core.management import call_command
from django.db import connection

from dedup import policy, services
from palace.models import Drawer, Entity, EntityAlias

pytestmark = pytest.mark.django_db


def legacy_drawer(room, content):
    return Drawer.objects.create(
        room=room,
        content=content,
        content_hash=policy.content_hash(content),
        normalized_content="",
        fingerprint=None,
    )


def test_backfill_command_fills_once_and_merges_nothing(capsys, dedup_settings):
    room = services.room_get_or_create(wing="old", room="r")
    legacy_drawer(room, "The same words.")
    legacy_drawer(room, "The same words.")
    legacy_drawer(room, "...")  # nothing to fingerprint
    Entity.objects.create(name="Ada", kind="person", key="", key_length=0)
    Entity.objects.create(name="ADA", kind="person", key="", key_length=0)
    call_command("dedup_backfill")
    out = capsys.readouterr().out
    assert "fingerprints filled: 2" in out
    assert "entity keys filled: 2" in out
    assert Drawer.objects.count() == 3
    assert Entity.objects.count() == 2
    assert Drawer.objects.filter(fingerprint=policy.fingerprint("the same words")).count() == 2
    assert set(Entity.objects.values_list("key", flat=True)) == {"ada"}
    call_command("dedup_backfill", "--no-progress")
    assert "fingerprints filled: 0" in capsys.readouterr().out


SENTENCE = "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了"


def test_drawers_written_without_an_index_text_gain_it_and_are_found(capsys, dedup_settings):
    """A drawer a process of the release before wrote while dedup/0016 ran: its sentence, in a
    script written without spaces, is indexed whole until the backfill cuts it into pieces."""
    room = services.room_get_or_create(wing="old", room="r")
    written = services.drawer_write(room=room, content=SENTENCE).drawer
    Drawer.objects.filter(pk=written.pk).update(index_text=None)
    services.drawer_write(room=room, content="Ça va, les déploiements?")  # may need one: no
    call_command("dedup_backfill", "--no-progress")
    assert "index texts filled: 1" in capsys.readouterr().out
    written.refresh_from_db()
    assert written.index_text == policy.index_text(policy.normalize_text(SENTENCE))
    variant = services.drawer_write(room=room, content=SENTENCE.replace("磁盘", "硬盘"))
    assert [link.older_id for link in variant.links] == [written.pk]
    call_command("dedup_backfill", "--no-progress")
    assert "index texts filled: 0" in capsys.readouterr().out


def test_a_korean_drawer_written_without_its_pairs_gains_them(capsys, dedup_settings):
    """A Korean drawer a process of the release before dedup/0020 wrote while it ran."""
    room = services.room_get_or_create(wing="old", room="r")
    written = services.drawer_write(room=room, content="서울에서 회의를 했습니다").drawer
    Drawer.objects.filter(pk=written.pk).update(index_text=None)
    call_command("dedup_backfill", "--no-progress")
    assert "index texts filled: 1" in capsys.readouterr().out
    written.refresh_from_db()
    assert written.index_text == "서울에서 서울 울에 에서 회의를 회의 의를 했습니다 했습 습니 니다"


def test_a_legacy_drawer_s_normalised_text_comes_with_its_index_text(dedup_settings):
    from dedup.backfill import backfill_fingerprints

    room = services.room_get_or_create(wing="old", room="r")
    legacy = legacy_drawer(room, SENTENCE)
    backfill_fingerprints(Drawer)
    legacy.refresh_from_db()
    assert legacy.normalized_content == SENTENCE
    assert legacy.index_text == policy.index_text(SENTENCE)


def test_legacy_drawers_become_candidates_after_backfill(dedup_settings):
    room = services.room_get_or_create(wing="old", room="r")
    legacy = legacy_drawer(room, "We chose SurrealDB for storage in the early days.")
    from dedup.backfill import backfill_entity_keys, backfill_fingerprints

    backfill_fingerprints(Drawer)
    backfill_entity_keys(Entity, EntityAlias)
    result = services.drawer_write(
        room=room, content="We chose SurrealDB for storage in the early days!"
    )
    assert [link.older for link in result.links] == [legacy]
    assert result.links[0].verdict == "normalized"
    typo = services.drawer_write(
        room=room, content="We chose SurrealDB for storge in the early days."
    )
    assert legacy in [link.older for link in typo.links]  # found through the full-text index


@pytest.mark.django_db(transaction=True)
def test_maintain_command_keeps_candidates_working(capsys, dedup_settings):
    room = services.room_get_or_create(wing="w", room="r")
    original = services.drawer_write(
        room=room, content="The nightly compaction job rotates the audit report files."
    )
    call_command("dedup_maintain")
    assert capsys.readouterr().out.strip()
    typo = services.drawer_write(
        room=room, content="The nightly compaction job rotates the audit reprot files."
    )
    assert [link.older_id for link in typo.links] == [original.drawer.id]


def test_signatures_written_in_another_form_are_computed_again(capsys, dedup_settings):
    """A process of the release before, still serving while dedup/0011 ran, wrote signatures of
    the form before: the new lookups miss them until `dedup_backfill --signatures` computes
    every signature again (an entity's and a person alias's; not a convergence's)."""
    from importlib import import_module

    from dedup.policy.signatures import key_signatures
    from palace.models import EntityAliasSignature, EntitySignature

    previous = import_module("dedup.migrations.0011_entity_signatures_carry_lengths")
    ada = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=ada, alias="The Countess")
    services.entity_resolve(name="ADA LOVELACE", kind="person")  # a convergence's alias
    for model, owner in ((EntitySignature, "entity"), (EntityAliasSignature, "alias")):
        rows = list(model.objects.all())
        model.objects.all().delete()
        model.objects.bulk_create(
            model(signature=old, key=row.key, **{f"{owner}_id": getattr(row, f"{owner}_id")})
            for row in {getattr(r, f"{owner}_id"): r for r in rows}.values()
            for old in previous._previous_key_signatures(row.key)
        )
    assert services.entity_resolve(name="Ada Lovelacx", kind="person").created  # missed

    call_command("dedup_backfill", "--signatures", "--no-progress")
    assert "entity signatures computed again: 3 keys" in capsys.readouterr().out
    stored = set(EntitySignature.objects.filter(entity=ada).values_list("signature", flat=True))
    assert stored == key_signatures("ada lovelace")
    indexed = EntityAliasSignature.objects.values_list("alias__alias", flat=True).distinct()
    assert list(indexed) == ["The Countess"]
    assert services.entity_resolve(name="Ada Lovelaze", kind="person").entity == ada
    assert services.entity_resolve(name="The Countesz", kind="person").entity == ada


@pytest.mark.django_db(transaction=True)
def test_maintain_marks_new_signature_pages_visible(capsys, dedup_settings):
    """After every signature is written anew (dedup/0011, `dedup_backfill --signatures`), the
    lookups read (owner, key) from the index alone only once VACUUM has marked the pages visible:
    `dedup_maintain` vacuums both signature tables, and the backfill says to run it."""
    if connection.vendor != "postgresql":
        pytest.skip("the visibility map is PostgreSQL's")
    entity = services.entity_resolve(name="Ada Lovelace", kind="person").entity
    services.entity_alias_add(entity=entity, alias="Countess of Lovelace")
    call_command("dedup_backfill", "--signatures", "--no-progress")
    assert "dedup_maintain" in capsys.readouterr().out

    def visible_pages() -> dict[str, int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relname, relallvisible FROM pg_class WHERE relname IN "
                "('palace_entitysignature', 'palace_entityaliassignature')"
            )
            return dict(cursor.fetchall())

    assert visible_pages() == {"palace_entitysignature": 0, "palace_entityaliassignature": 0}
    call_command("dedup_maintain")
    assert "palace_entitysignature" in capsys.readouterr().out
    assert visible_pages() == {"palace_entitysignature": 1, "palace_entityaliassignature": 1}
