"""The migrations to foreign keys carry existing rows over, and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from palace.models import AuditEntry, DistinctPair
from review.models import Proposal, SweepPart, SweepRun

BARE_IDS = [("palace", "0004_audit_actions_named"), ("review", "0002_sample_verdicts")]
KEYS = [("palace", "0006_distinct_pair_keys_and_audit_reverts"), ("review", "0003_proposal_keys")]


def migrate(targets):
    """Migrate to `targets` and return the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def lay_down_bare_ids(apps):
    """Rows as the bare-id schema held them, including ids of rows that are gone."""
    model = apps.get_model
    room = model("palace", "Room").objects.create(
        wing=model("palace", "Wing").objects.create(name="w"), name="r"
    )
    older, newer = (
        model("palace", "Drawer").objects.create(room=room, content=text, content_hash=text)
        for text in ("older", "newer")
    )
    ada, adah = (
        model("palace", "Entity").objects.create(name=name, kind="person")
        for name in ("Ada", "Adah")
    )
    link = model("palace", "DrawerLink").objects.create(
        newer=newer, older=older, similarity=0.9, verdict="near"
    )
    run = model("review", "SweepRun").objects.create(threshold=0.9)
    proposals = model("review", "Proposal").objects
    common = {"run": run, "tier": "near", "score": 0.9}
    drawer = proposals.create(
        kind="drawer", newer_id=newer.pk, older_id=older.pk, applied_link=link.pk, **common
    )
    entity = proposals.create(kind="entity", newer_id=adah.pk, older_id=ada.pk, **common)
    missing = older.pk + 10**9  # no drawer has it, and above the older (sequences run on)
    gone = proposals.create(kind="drawer", newer_id=missing, older_id=older.pk, **common)
    pairs = model("palace", "DistinctPair").objects
    pairs.create(kind="drawer", low=older.pk, high=newer.pk)
    pairs.create(kind="entity", low=ada.pk, high=adah.pk)
    pairs.create(kind="drawer", low=older.pk, high=missing)
    audit = model("palace", "AuditEntry").objects
    decision = audit.create(action="review.dismiss", target_type="review_item", target_id="d1")
    revert = audit.create(
        action="review.revert",
        target_type="decision",
        target_id=str(decision.pk),
        data={"reverts": decision.pk},
    )
    return {
        "older": older.pk,
        "newer": newer.pk,
        "ada": ada.pk,
        "adah": adah.pk,
        "link": link.pk,
        "drawer": drawer.pk,
        "entity": entity.pk,
        "gone": gone.pk,
        "decision": decision.pk,
        "revert": revert.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_bare_ids_become_foreign_keys_and_back():
    try:
        ids = lay_down_bare_ids(migrate(BARE_IDS))
        migrate(KEYS)

        drawer = Proposal.objects.get(pk=ids["drawer"])
        assert (drawer.newer_drawer_id, drawer.older_drawer_id) == (ids["newer"], ids["older"])
        assert drawer.applied_drawer_link_id == ids["link"]
        entity = Proposal.objects.get(pk=ids["entity"])
        assert (entity.newer_entity_id, entity.older_entity_id) == (ids["adah"], ids["ada"])
        gone = Proposal.objects.get(pk=ids["gone"])
        assert (gone.newer_drawer_id, gone.older_drawer_id) == (None, ids["older"])
        assert sorted((p.kind, p.low, p.high) for p in DistinctPair.objects.all()) == [
            ("drawer", ids["older"], ids["newer"]),
            ("entity", ids["ada"], ids["adah"]),
        ]  # the pair naming a row that is gone is dropped
        assert AuditEntry.objects.get(pk=ids["revert"]).reverts_id == ids["decision"]

        apps = migrate(BARE_IDS)
        proposals = apps.get_model("review", "Proposal").objects
        assert sorted(proposals.values_list("kind", "newer_id", "older_id", "applied_link")) == [
            ("drawer", ids["newer"], ids["older"], ids["link"]),
            ("entity", ids["adah"], ids["ada"], None),
        ]  # a proposal with a side gone has no id to carry back
        pairs = apps.get_model("palace", "DistinctPair").objects
        assert sorted(pairs.values_list("kind", "low", "high")) == [
            ("drawer", ids["older"], ids["newer"]),
            ("entity", ids["ada"], ids["adah"]),
        ]
    finally:
        executor = MigrationExecutor(connection)  # back to the latest: what later tests use
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_one_of_unfinished_twins_a_running_one_first():
    """Of a queued run, a running one and another running one of one scope, the first running
    one is kept; the others, and their unfinished parts, are failed, naming it."""
    before, after = (
        [("review", "0006_sweep_parts")],
        [("review", "0007_one_unfinished_sweep_per_scope")],
    )
    try:
        old = migrate(before)
        runs, parts = (old.get_model("review", name).objects for name in ("SweepRun", "SweepPart"))
        queued, running, again = (
            runs.create(wing="ops", threshold=0.9, status=status)
            for status in ("queued", "running", "running")
        )
        part = parts.create(run_id=queued.pk, number=1, low_pk=0, high_pk=9, status="running")
        migrate(after)
        states = {
            run.pk: (run.status, run.error)
            for run in SweepRun.objects.filter(pk__in=[queued.pk, running.pk, again.pk])
        }
        repeated = f"Started while sweep {running.pk} of the same scope was unfinished."
        assert states == {
            queued.pk: ("failed", repeated),
            running.pk: ("running", ""),
            again.pk: ("failed", repeated),
        }
        assert SweepPart.objects.get(pk=part.pk).status == "failed"
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_a_proposal_stored_before_the_symbols_gate_is_given_its_verdict():
    """The what-if table and the confirm page read the stored gates: a "✅"/"❌" pair stored
    before the gate was counted as a merge that Apply then did not make (a fresh-eyes review)."""
    before, after = [("review", "0010_undo_offers")], [("review", "0011_proposal_symbols_gate")]
    allowed = "Deploys are allowed: \u2705"
    try:
        old = migrate(before)
        run = old.get_model("review", "SweepRun").objects.create(wing="ops", threshold=0.9)
        proposals = old.get_model("review", "Proposal").objects
        gates = {"same_kind": None, "same_entities": None, "numbers_differ": False}
        changed, kept, entity = (
            proposals.create(
                run_id=run.pk,
                kind=kind,
                tier="normalized",
                score=1.0,
                gates=gates,
                texts={"older": allowed, "newer": newer},
            )
            for kind, newer in (
                ("drawer", allowed.replace("\u2705", "\u274c")),
                ("drawer", allowed),
                ("entity", allowed.replace("\u2705", "\u274c")),
            )
        )
        migrate(after)
        stored = {p.pk: p.gates for p in Proposal.objects.all()}
        assert stored[changed.pk]["symbols_differ"] is True
        assert stored[kept.pk]["symbols_differ"] is False
        assert "symbols_differ" not in stored[entity.pk]
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
