"""Consolidation sweeps: scope, gates, idempotence, apply at a threshold, bulk reverse."""

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from dedup import services as write
from dedup.errors import Conflict
from dedup.policy.merge_gates import MERGE_TIERS, gates_pass
from dedup.services import DedupConfig
from palace.models import (
    AuditAction,
    AuditEntry,
    DistinctPair,
    Drawer,
    DrawerLink,
    Entity,
    EntityLink,
)
from review import services as decisions
from review.models import Proposal, SweepRun
from review.selectors import similarity_band
from review.selectors import sweeps as sweep_selectors
from review.services import sweep_parts, sweep_scan
from review.services import sweeps as sweep_services
from tests.conftest import person_client
from tests.dedup.test_entity_batch import legacy as legacy_entity

pytestmark = pytest.mark.django_db
OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)
FACT = "The staging database is refreshed from an anonymised production dump every Monday."


def legacy(room, content, **extra):
    """A drawer written while deduplication was off."""
    return write.drawer_write(
        room=room, content=content, mode=write.WriteMode.MINED, config=OFF, **extra
    ).drawer


@pytest.fixture
def palace(dedup_settings):
    ops = write.room_get_or_create(wing="ops", room="runbooks")
    other = write.room_get_or_create(wing="ops", room="elsewhere")
    diary = write.room_get_or_create(wing="agents", room="diary")
    rows = {
        "original": legacy(ops, FACT),
        "copy": legacy(ops, FACT),
        "shout": legacy(ops, FACT.upper()),
        "typo": legacy(ops, FACT.replace("refreshed", "refershed")),
        "near_miss": legacy(ops, FACT.replace("Monday", "Friday")),
        "unrelated": legacy(
            ops, "Rotate the API tokens of departed agents within one working day."
        ),
        "other_room": legacy(other, FACT),
        "alice": legacy(diary, FACT, agent="alice"),
        "bob": legacy(diary, FACT, agent="bob"),
        "alice_again": legacy(diary, FACT, agent="alice"),
    }
    return rows


def run_sweep(**options):
    options.setdefault("threshold", 0.9)
    return sweep_services.execute(sweep_services.start(**options))


def pairs(run):
    return {(p.newer_pk, p.older_pk): p for p in run.proposals.all()}


def test_sweep_proposes_within_scope_and_acts_on_nothing(palace):
    before = (Drawer.objects.current().count(), DrawerLink.objects.count())
    run = run_sweep()
    assert run.status == "done"
    assert run.done == run.total == 10
    found = pairs(run)
    p = {name: drawer.pk for name, drawer in palace.items()}
    assert found[(p["copy"], p["original"])].tier == "exact"
    assert found[(p["shout"], p["original"])].tier == "normalized"
    assert found[(p["typo"], p["original"])].tier == "near"
    assert found[(p["alice_again"], p["alice"])].tier == "exact"
    # Never across rooms, never across agents' diaries.
    assert not [k for k in found if p["other_room"] in k]
    assert not [k for k in found if p["bob"] in k]
    assert run.counts["exact"] == 2
    assert run.counts["normalized"] >= 2
    assert (Drawer.objects.current().count(), DrawerLink.objects.count()) == before
    proposal = found[(p["typo"], p["original"])]
    assert proposal.texts == {"older": FACT, "newer": FACT.replace("refreshed", "refershed")}
    assert proposal.gates["signals"]["threshold"] == 0.9


def test_near_miss_numbers_and_dates_are_flagged(palace, dedup_settings):
    ops = palace["original"].room
    legacy(ops, "Release 2026.11.1 ships on 2026-11-30 to every customer in the north region.")
    legacy(ops, "Release 2026.11.2 ships on 2026-11-30 to every customer in the north region.")
    run = run_sweep()
    flagged = [p.texts["newer"] for p in run.proposals.all() if p.gates["numbers_differ"]]
    releases = [text for text in flagged if "2026.11.2" in text]
    weekdays = [text for text in flagged if "Friday" in text]  # the fixture's near miss
    assert len(releases) == 1
    assert len(weekdays) == 4  # against the original, its copy, its shout and its typo
    assert len(flagged) == 5


def test_sweeping_twice_proposes_nothing_new(palace):
    first = run_sweep()
    second = run_sweep()
    assert first.proposals.count() > 0
    assert second.proposals.count() == 0
    assert second.counts == {}


def test_linked_decided_and_distinct_pairs_are_not_proposed(palace, curator):
    first = run_sweep()
    # Forget the proposals, keep a link, a decision and a distinct pair.
    p = {name: drawer.pk for name, drawer in palace.items()}
    Proposal.objects.all().delete()
    write.drawer_link(
        newer=palace["shout"], older=palace["original"], verdict="normalized", signals={}
    )
    typo_link, _ = write.drawer_link(
        newer=palace["typo"], older=palace["original"], verdict="near", signals={}
    )
    decisions.decide(item=f"d{typo_link.pk}", action="delete_link", actor=curator)
    second = run_sweep()
    found = pairs(second)
    assert (p["shout"], p["original"]) not in found  # linked
    assert (p["typo"], p["original"]) not in found  # remembered as distinct
    assert DistinctPair.objects.count() == 1
    assert (p["copy"], p["original"]) in found
    assert first.pk != second.pk


def test_kind_gate_and_entity_gate(dedup_settings):
    room = write.room_get_or_create(wing="w", room="r")
    event = legacy(room, "Priya was diagnosed with a gluten intolerance in March.", kind="event")
    state = legacy(room, "Priya was diagnosed with a gluten intolerance in March!", kind="state")
    assert not pairs(run_sweep())  # same words, different kinds: skipped
    Proposal.objects.all().delete()
    run = run_sweep(same_kind=False)
    (proposal,) = run.proposals.all()
    assert proposal.gates["same_kind"] is False
    assert (proposal.newer_pk, proposal.older_pk) == (
        state.pk,
        event.pk,
    )
    a = legacy(room, "Sam moved to the platform team and now leads the storage migration.")
    b = legacy(room, "Sam moved to the platform team and now leads the storage migration!")
    write.mention_add(drawer=a, name="Sam Carter", kind="person")
    write.mention_add(drawer=b, name="Sam Okafor", kind="person")
    run = run_sweep()
    (different_people,) = [p for p in run.proposals.all() if p.newer_pk == b.pk]
    assert different_people.gates["same_entities"] is False
    assert not gates_pass(different_people.gates)


def snapshot():
    return (
        list(
            Drawer.objects.order_by("pk").values("pk", "valid_to", "superseded_by", "consolidation")
        ),
        list(DrawerLink.objects.order_by("pk").values("pk", "newer", "older", "status")),
    )


def test_apply_at_a_threshold_then_reverse_to_the_exact_prior_state(palace, curator):
    run = run_sweep()
    prior = snapshot()
    applied = sweep_services.apply(run, threshold=0.99, actor=curator)
    p = {name: drawer.pk for name, drawer in palace.items()}
    statuses = {(x.newer_pk, x.older_pk): x.status for x in run.proposals.all()}
    assert statuses[(p["copy"], p["original"])] == "merged"  # exact, gates pass
    assert statuses[(p["shout"], p["original"])] == "merged"  # normalized, gates pass
    assert (
        statuses[(p["typo"], p["original"])] == "proposed"
        or statuses[(p["typo"], p["original"])] == "linked"
    )
    assert Drawer.objects.get(pk=p["copy"]).superseded_by_id == p["original"]
    assert applied.merged >= 2
    assert applied.batch
    # A later write is left untouched by the reverse.
    later = write.drawer_write(
        room=palace["original"].room, content="A brand new runbook entry about DNS."
    ).drawer
    assert sweep_services.reverse(run, actor=curator).undone == applied.linked + applied.merged
    after = snapshot()
    assert [d for d in after[0] if d["pk"] != later.pk] == prior[0]
    assert after[1] == prior[1]
    assert Drawer.objects.filter(pk=later.pk).exists()
    assert set(run.proposals.values_list("status", flat=True)) == {"proposed"}


def test_applied_again_after_a_reverse_it_reverses_again_to_the_prior_state(palace, curator):
    """Each application's merges are undone by the reverse after it: the second reverse reverts
    the second application's merge rows, not the first's (reverted already)."""
    run = run_sweep()
    prior = snapshot()
    sweep_services.apply(run, threshold=0.99, actor=curator)
    sweep_services.reverse(run, actor=curator)
    again = sweep_services.apply(run, threshold=0.99, actor=curator)
    assert again.merged >= 2
    copy = palace["copy"]
    assert Drawer.objects.get(pk=copy.pk).superseded_by_id == palace["original"].pk
    sweep_services.reverse(run, actor=curator)
    assert Drawer.objects.get(pk=copy.pk).superseded_by_id is None
    assert snapshot() == prior
    merges = AuditEntry.objects.filter(
        action=AuditAction.decision("merge"), data__evidence__sweep=run.pk
    )
    assert merges.count() == 2 * again.merged
    assert AuditEntry.objects.filter(action="review.revert").count() == 2 * again.merged


def test_a_second_reverse_is_refused_and_writes_no_audit_row(palace, curator):
    run = run_sweep()
    sweep_services.apply(run, threshold=0.99, actor=curator)
    sweep_services.reverse(run, actor=curator)
    rows = AuditEntry.objects.count()
    with pytest.raises(Conflict) as refused:
        sweep_services.reverse(run, actor=curator)
    assert refused.value.code == "run_not_applied"
    assert AuditEntry.objects.count() == rows


def test_near_pairs_become_links_never_merges_and_below_threshold_stay_or_are_discarded(
    palace, curator
):
    run = run_sweep()
    sweep_services.apply(run, threshold=1.0, tiers=["exact"], actor=curator)
    assert set(run.proposals.filter(tier="near").values_list("status", flat=True)) == {"proposed"}
    sweep_services.apply(run, threshold=0.9, tiers=["near"], actor=curator)
    current = set(Drawer.objects.current().values_list("pk", flat=True))
    for proposal in run.proposals.filter(tier="near"):
        if {proposal.newer_pk, proposal.older_pk} <= current:
            assert proposal.status == "linked"
            assert DrawerLink.objects.get(pk=proposal.applied_link_id).verdict == "near"
        else:  # a side was merged away by the first application: nothing to link
            assert proposal.status == "proposed"


def test_discard_below_the_threshold_and_never_propose_again(palace, curator):
    run = run_sweep()
    sweep_services.apply(run, threshold=1.0, merge_tiers=(), discard_below=True, actor=curator)
    statuses = dict(run.proposals.values_list("tier", "status").distinct())
    assert statuses["near"] == "discarded"
    assert statuses["exact"] == "linked"
    assert not run_sweep().proposals.exists()


REVIEW = (
    "Quarterly infrastructure reviews document observability, capacity planning, failover "
    "drills and budgets for every regional datacenter team."
)


def test_sweeps_find_variants_whose_broken_words_hide_them_from_the_write_path(dedup_settings):
    """The write path asks five pairs of the longest words, a sweep six: five typos, one in each
    of the write path's pairs, hide a variant from the write but not from the sweep."""
    room = write.room_get_or_create(wing="ops", room="reviews")
    original = write.drawer_write(room=room, content=REVIEW).drawer
    typos = REVIEW
    for word, broken in (
        ("infrastructure", "infrastrucxure"),
        ("observability", "observabixity"),
        ("datacenter", "datacentex"),
        ("Quarterly", "Quartexly"),
        ("document", "documext"),
    ):
        typos = typos.replace(word, broken)
    written = write.drawer_write(room=room, content=typos)
    assert written.created
    assert written.links == ()

    proposal = pairs(run_sweep())[(written.drawer.pk, original.pk)]
    assert proposal.tier == "near"
    assert proposal.gates["signals"]["similarity"] >= 0.9


def test_entities_sweep_proposes_with_the_write_path_rules(dedup_settings):
    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    # Written while fuzzy matching was off: typos became their own entities.
    for name in ("SurrealDB", "SurealDB", "Katarina", "Katerino"):
        write.entity_resolve(name=name, kind="tool", config=strict)
    run = run_sweep(entities=True)
    found = {(p.texts["newer"], p.texts["older"]): p.tier for p in run.proposals.all()}
    assert found == {("SurealDB", "SurrealDB"): "typo", ("Katerino", "Katarina"): "possible"}
    assert not EntityLink.objects.exists()
    sweep_services.apply(run, threshold=0.75, actor=None)
    assert EntityLink.objects.count() == 2
    assert not run_sweep(entities=True).proposals.exists()


def test_entities_sweep_reaches_through_an_alias_a_person_recorded(dedup_settings):
    """As a sighting would: a typo of an alias a person recorded converges on its entity."""
    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    katarina = write.entity_resolve(name="Katarina Nowak", kind="person", config=strict).entity
    write.entity_alias_add(entity=katarina, alias="Kasia Lindqvist")
    write.entity_resolve(name="Kasia Lindqvsit", kind="person", config=strict)
    write.entity_resolve(name="Kasia Lindqvistaa", kind="person", config=strict)
    sighted = write.entity_resolve(name="Kasia Lindqivst", kind="person")
    assert sighted.entity == katarina  # what a sighting of another typo of it does now
    resembling = write.entity_resolve(name="Kasia Lindqvistbb", kind="person")
    # and of a name two edits from it: linked, at the distance from the alias
    written = EntityLink.objects.get(newer=resembling.entity, older=katarina)
    assert written.distance == 2
    run = run_sweep(entities=True)
    found = {(p.texts["newer"], p.texts["older"]): p for p in run.proposals.all()}
    assert set(found) == {
        ("Kasia Lindqvsit", "Katarina Nowak"),
        ("Kasia Lindqvistaa", "Katarina Nowak"),
    }
    typo, possible = (
        found[("Kasia Lindqvsit", "Katarina Nowak")],
        found[("Kasia Lindqvistaa", "Katarina Nowak")],
    )
    assert (typo.tier, typo.gates["distance"]) == ("typo", 1)  # from the alias, not the name
    assert (possible.tier, possible.gates["distance"]) == ("possible", 2)
    sweep_services.apply(run, threshold=0.75, actor=None)
    assert EntityLink.objects.get(older=katarina, newer__name="Kasia Lindqvsit").distance == 1


def test_entities_sweep_follows_a_curators_merge_as_a_sighting_does(dedup_settings, curator):
    """A name that would converge on an entity merged away is proposed with the entity that
    answers for it now (by alias, as a sighting resolves it), even a newer one; a name that
    would converge on itself proposes nothing."""
    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    old_spelling = write.entity_resolve(name="Katarina Nowk", kind="person", config=strict).entity
    imported = legacy_entity("katarina nowk", "person")
    kept = write.entity_resolve(name="Katarina Nowak-Lind", kind="person", config=strict).entity
    link = EntityLink.objects.create(newer=kept, older=old_spelling, similarity=0.8, distance=6)
    # The curator keeps the newer, fuller name: the older spelling answers through it now.
    decisions.decide(item=f"e{link.pk}", action="merge", canonical=str(kept.uuid), actor=curator)
    old_spelling.refresh_from_db()
    assert write.canonical_entity(old_spelling) == kept
    # What a sighting of the imported name does where it is not stored yet (undone after).
    imported_pk = imported.pk
    with transaction.atomic():
        imported.delete()
        sighted = write.entity_resolve(name="katarina nowk", kind="person")
        transaction.set_rollback(True)
    assert (sighted.entity, sighted.rule) == (kept, "alias")
    run = run_sweep(entities=True)
    found = {(p.newer_pk, p.older_pk): p for p in run.proposals.all()}
    assert set(found) == {(kept.pk, imported_pk)}  # not with the entity merged away
    assert found[(kept.pk, imported_pk)].tier == "alias"
    assert found[(kept.pk, imported_pk)].texts == {
        "newer": "Katarina Nowak-Lind",
        "older": "katarina nowk",
    }
    # An admin points the older spelling at the imported entity: its name reaches itself.
    Entity.objects.filter(pk=old_spelling.pk).update(redirect_to=imported_pk)
    Proposal.objects.all().delete()
    assert not run_sweep(entities=True).proposals.exists()


@pytest.mark.parametrize("batch", [1, 200])
def test_a_pair_through_a_redirect_is_proposed_alike_whatever_the_batches(
    dedup_settings, monkeypatch, batch
):
    """The older name reaches the newer entity through a redirect (by alias), the newer name
    reaches the older by its own (exact): proposed once, from the newer name's side, whether the
    two are swept in one batch or in two."""
    monkeypatch.setattr(sweep_scan, "BATCH", batch)
    redirected = legacy_entity("ada lovelace", "person")
    swept = legacy_entity("Ada Lovelace", "person")
    canonical = legacy_entity("Ada Lovelace", "other")
    Entity.objects.filter(pk=redirected.pk).update(redirect_to=canonical)
    run = run_sweep(entities=True)
    assert {(p.newer_pk, p.older_pk, p.tier) for p in run.proposals.all()} == {
        (canonical.pk, swept.pk, "exact")
    }
    assert run.counts == {"exact": 1}


def test_an_entity_batch_costs_the_same_statements_whatever_its_size(dedup_settings):
    """Its reads: the part's rows, its lookups (`older_lookups`) and the pairs known already."""
    strict = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    for index in range(120):
        write.entity_resolve(name=f"Servicename{index:03d}", kind="tool", config=strict)

    def statements(rows: int) -> int:
        run = sweep_services.start(threshold=0.9, entities=True)
        part = sweep_parts.resume(run)[0]
        part.high_pk = part.low_pk + rows
        with CaptureQueriesContext(connection) as queries:
            scanned = sweep_scan.scan_batch(run, part)
            scanned.write()
        assert scanned.rows == rows
        assert scanned.tally.counts  # near names found, and proposed
        SweepRun.objects.filter(pk=run.pk).update(status=SweepRun.Status.DONE)
        # Not counted: the proposals' bulk insert, in the statements the database allows
        # (Django's batches), and on SQLite the signature lookups, one an entity (`older_lookups`).
        return sum(
            not q["sql"].startswith("INSERT")
            and not (connection.vendor == "sqlite" and "palace_entitysignature" in q["sql"])
            for q in queries.captured_queries
        )

    postgresql = connection.vendor == "postgresql"  # `entity_lookups`' SET LOCAL, a lookup
    assert statements(10) == statements(120) == 6 + 2 * postgresql


def test_command_shows_progress_and_counts(palace, capsys):
    call_command("dedup_sweep", "--wing", "ops")
    out, err = capsys.readouterr()
    assert "exact: 1" in out
    assert "proposals:" in out
    assert "sweep" in err  # the progress bar
    run_id = Proposal.objects.first().run_id
    call_command("sweep_apply", str(run_id), "--threshold", "1.0")
    assert "merged" in capsys.readouterr().out
    call_command("sweep_reverse", str(run_id))
    assert "undone:" in capsys.readouterr().out


def test_bad_sweep_options_are_refused(palace):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No such wing"):
        call_command("dedup_sweep", "--wing", "nowhere")
    with pytest.raises(CommandError, match="threshold"):
        call_command("dedup_sweep", "--threshold", "0.2")


def test_sweep_api_runs_in_the_background_and_reports(palace, curator, viewer):
    client = person_client(curator)
    response = client.post("/api/sweeps", {"wing": "ops", "room": "runbooks"}, format="json")
    assert response.status_code == 202
    run_id = response.json()["id"]
    status = client.get(f"/api/sweeps/{run_id}").json()
    assert status["status"] == "done"
    assert status["progress"] == 1.0
    assert status["summary"]["tiers"]["exact"] == 1
    assert status["summary"]["if_applied_at"]["1.00"]["merges"] >= 1
    proposals = client.get(f"/api/sweeps/{run_id}/proposals", {"tier": "near"}).json()["results"]
    assert proposals
    assert all(p["tier"] == "near" for p in proposals)
    # Tests run the queued job at once: its outcome is in the 202's `job` (tests/review/
    # test_sweep_jobs.py follows a job through a real queue).
    applied = client.post(f"/api/sweeps/{run_id}/apply", {"threshold": 0.99}, format="json").json()
    assert applied["job"]["applied"]["merged"] >= 1
    reversed_ = client.post(f"/api/sweeps/{run_id}/reverse", {}, format="json").json()
    assert reversed_["job"]["reversed"]["undone"] >= 1
    assert client.get("/api/sweeps/999999").status_code == 404
    bad = client.post("/api/sweeps", {"threshold": 0.1}, format="json")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid"
    reader = person_client(viewer)
    assert reader.post("/api/sweeps", {}, format="json").status_code == 403
    assert reader.get(f"/api/sweeps/{run_id}").status_code == 200


def test_an_api_apply_naming_no_tier_is_refused(palace, curator):
    run = run_sweep()
    client = person_client(curator)
    refused = client.post(
        f"/api/sweeps/{run.pk}/apply", {"threshold": 0.99, "tiers": []}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid"
    assert not run.proposals.exclude(status=Proposal.Status.PROPOSED).exists()


def test_sample_judge_and_measure_precision(palace, curator):
    run = run_sweep()
    marked = sweep_services.draw_sample(run, per_stratum=1, actor=curator)
    strata = {(p.tier, similarity_band(p.score)) for p in run.proposals.all()}
    assert marked == len(strata)
    assert (
        sweep_services.draw_sample(run, per_stratum=1, actor=curator) == 0
    )  # the same sample again
    sampled = list(run.proposals.filter(sampled=True).order_by("pk"))
    sweep_services.judge(sampled[0], verdict="same", actor=curator)
    sweep_services.judge(sampled[1], verdict="wrong", actor=curator)
    with pytest.raises(decisions.AlreadyDecided, match="already decided this item"):
        sweep_services.judge(sampled[0], verdict="wrong", actor=curator)
    rows = sweep_selectors.precision(run)
    judged = [r for r in rows if r["same"] + r["wrong"]]
    assert {r["precision"] for r in judged} <= {0.0, 1.0}
    assert len(judged) in (1, 2)


def test_sweep_pages(client, curator, viewer, palace):
    client.force_login(curator)
    response = client.post("/sweeps/", {"wing": "ops", "threshold": "0.9"})
    run = SweepRun.objects.get()
    assert response["Location"] == f"/sweeps/{run.pk}/"
    page = client.get(f"/sweeps/{run.pk}/").content.decode()
    assert "What applying would do" in page
    assert "Apply" in page
    client.post(f"/sweeps/{run.pk}/", {"action": "sample", "per_stratum": "2"})
    page = client.get(f"/sweeps/{run.pk}/").content.decode()
    assert "To judge" in page
    proposal = run.proposals.filter(sampled=True).first()
    client.post(f"/sweeps/{run.pk}/", {"action": "same", "proposal": proposal.pk})
    proposal.refresh_from_db()
    assert proposal.verdict == "same"
    client.post(
        f"/sweeps/{run.pk}/",
        {"action": "apply", "threshold": "1.0", "merge": "1", "tiers": ["exact"], "confirm": "1"},
    )
    assert run.proposals.filter(status="merged").exists()
    client.post(f"/sweeps/{run.pk}/", {"action": "reverse", "confirm": "1"})
    assert not run.proposals.filter(status="merged").exists()
    partial = client.get(f"/sweeps/{run.pk}/", HTTP_HX_REQUEST="true")
    assert partial["HX-Refresh"] == "true"
    assert b"<html" not in partial.content
    client.force_login(viewer)
    assert client.get(f"/sweeps/{run.pk}/").status_code == 200
    assert client.post(f"/sweeps/{run.pk}/", {"action": "reverse"}).status_code == 403
    assert client.post("/sweeps/", {"wing": "ops"}).status_code == 403
    assert client.get("/sweeps/99999/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_background_sweep_through_the_database_task_backend(palace, settings, capsys):
    """The production path: the command enqueues into the database, `db_worker` runs it."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    call_command("dedup_sweep", "--wing", "ops", "--background")
    assert "queued" in capsys.readouterr().out
    run = SweepRun.objects.get()
    assert run.status == "queued"
    call_command("db_worker", "--batch", "--no-startup-delay", "--interval", "0")
    run.refresh_from_db()
    assert run.status == "done"
    assert run.proposals.exists()


def test_proposals_appear_in_the_review_queue_under_their_run(client, curator, palace):
    run = run_sweep()
    client.force_login(curator)
    links_only = client.get("/").content.decode()
    assert "sweep #" not in links_only.split("<tbody>")[1]  # proposals stay out of the links' queue
    page = client.get("/", {"run": run.pk, "rule": "near"}).content.decode()
    near = run.proposals.filter(tier="near")
    assert f"{near.count()} proposal" in page
    assert all(f'href="/items/p{p.pk}/' in page for p in near)
    target = near.order_by("pk").first()
    item = client.get(f"/items/p{target.pk}/").content.decode()
    assert "The same" in item
    assert "Not the same" in item
    assert f"sweep #{run.pk}" in item
    client.post(f"/items/p{target.pk}/decide", {"action": "wrong", "query": f"run={run.pk}"})
    target.refresh_from_db()
    assert target.verdict == "wrong"
    assert target.status == "proposed"  # judged, nothing applied
    assert not DrawerLink.objects.exists()
    # Chosen in the queue, not drawn: counted apart from the sample's precision.
    judged = [r for r in sweep_selectors.precision(run) if r["elsewhere"]]
    assert [r["precision"] for r in judged] == [None]
    after = client.get("/", {"run": run.pk, "rule": "near"}).content.decode()
    assert f'href="/items/p{target.pk}/' not in after  # decided: out of the open queue


def test_judging_a_proposal_through_the_api_refuses_twice_and_reverts(
    palace, curator, other_curator
):
    run = run_sweep()
    proposal = run.proposals.order_by("pk").first()
    mine, theirs = person_client(curator), person_client(other_curator)
    queue = mine.get("/api/review/queue", {"run": run.pk}).json()
    assert {i["type"] for i in queue["items"]} == {"proposal"}
    assert queue["counts"]["proposal"] == run.proposals.count()
    response = mine.post(
        f"/api/review/items/p{proposal.pk}/decisions", {"action": "same"}, format="json"
    )
    assert response.status_code == 201
    refused = theirs.post(
        f"/api/review/items/p{proposal.pk}/decisions", {"action": "wrong"}, format="json"
    )
    assert refused.status_code == 409
    assert "cora already decided" in refused.json()["error"]
    bad = mine.post(
        f"/api/review/items/p{proposal.pk}/decisions", {"action": "merge"}, format="json"
    )
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_action"
    decisions.revert(decision=response.json()["id"], actor=curator)
    proposal.refresh_from_db()
    assert proposal.verdict == ""


def test_proposal_pages_of_the_queue_cover_every_proposal_once(palace):
    from review import selectors

    run = run_sweep()
    seen, cursor = [], None
    while True:
        page = selectors.queue_page(
            selectors.QueueFilters(run=run.pk, order="uncertain"), cursor=cursor, size=2
        )
        seen += [i.id for i in page.items]
        if not (cursor := page.next_cursor):
            break
    assert sorted(seen) == sorted(f"p{pk}" for pk in run.proposals.values_list("pk", flat=True))
    assert len(seen) == len(set(seen))


def test_bad_run_filter(client, curator):
    client.force_login(curator)
    assert client.get("/", {"run": "abc"}).status_code == 400


def test_sample_is_stratified_by_similarity_band(palace):
    run = run_sweep()
    near = list(run.proposals.filter(tier="near"))
    Proposal.objects.filter(pk=near[0].pk).update(score=0.91)
    Proposal.objects.filter(pk__in=[p.pk for p in near[1:]]).update(score=0.99)
    assert sweep_services.draw_sample(run, per_stratum=1) == len(
        {(p.tier, similarity_band(p.score)) for p in run.proposals.all()}
    )
    sampled_near = {p.score for p in run.proposals.filter(tier="near", sampled=True)}
    assert sampled_near == {0.91, 0.99}  # one from each band, not one for the whole tier


@pytest.mark.parametrize("room_in_memory", [True, False], ids=["room read whole", "index"])
def test_a_sweep_finds_variants_of_sentences_written_without_spaces(
    dedup_settings, monkeypatch, room_in_memory
):
    """A sentence of Chinese with no punctuation is one word of its normalised text; the sweep
    asks its pieces (`policy.index_text`), of the room read whole or of the full-text index,
    and proposes each one-character variant with its original."""
    import random

    from dedup.candidates import sweep_rooms

    if not room_in_memory:
        monkeypatch.setattr(sweep_rooms, "MAX_DRAWERS", 10)
    rng = random.Random(5)
    han = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可"
    room = write.room_get_or_create(wing="langs", room="han")
    texts = ["".join(rng.choice(han) for _ in range(rng.randint(16, 50))) for _ in range(200)]
    originals = [legacy(room, text) for text in texts]
    variants = {}
    for original in originals[:12]:
        at = rng.randrange(len(original.content))
        text = original.content[:at] + "猫" + original.content[at + 1 :]
        variants[legacy(room, text).pk] = original.pk
    found = pairs(run_sweep(wing="langs"))
    missed = [pair for pair in variants.items() if pair not in found]
    assert missed == []


def test_a_merge_a_curator_reverted_first_is_not_counted_undone_again(palace, curator):
    run = run_sweep()
    applied = sweep_services.apply(run, threshold=0.99, actor=curator)
    merge = AuditEntry.objects.filter(
        action=AuditAction.decision("merge"), data__evidence__sweep=run.pk
    ).first()
    decisions.revert(decision=merge, actor=curator)
    foretold = sweep_selectors.reverse_reach(run)
    reversed_ = sweep_services.reverse(run, actor=curator)
    assert reversed_.undone == applied.linked + applied.merged - 1
    assert foretold["unlink"] + foretold["unmerge"] == reversed_.undone


def test_a_run_whose_merges_were_all_reverted_by_hand_still_reverses(palace, curator):
    """Its proposals were left merged for good: the reverse said nothing was applied."""
    run = run_sweep()
    sweep_services.apply(run, threshold=0.99, tiers=["exact", "normalized"], actor=curator)
    for merge in AuditEntry.objects.filter(
        action=AuditAction.decision("merge"), data__evidence__sweep=run.pk
    ):
        decisions.revert(decision=merge, actor=curator)
    reversed_ = sweep_services.reverse(run, actor=curator)
    assert reversed_.undone == 0
    assert not run.proposals.filter(status="merged").exists()


def test_judging_a_card_returns_to_the_next_one_saying_what_was_done(client, curator, palace):
    client.force_login(curator)
    run = run_sweep()
    client.post(f"/sweeps/{run.pk}/", {"action": "sample", "per_stratum": "5"})
    proposal = run.proposals.filter(sampled=True).order_by("tier", "score").first()
    response = client.post(f"/sweeps/{run.pk}/", {"action": "wrong", "proposal": proposal.pk})
    assert response["Location"] == f"/sweeps/{run.pk}/?judged={proposal.pk}#to-judge"
    page = client.get(response["Location"]).content.decode()
    assert f"Proposal {proposal.pk} judged not the same." in page
    assert 'id="to-judge"' in page


def test_a_proposal_judged_in_the_queue_counts_apart_from_the_sample(curator, palace):
    """Chosen by the curator, not drawn: it would bias the sample's precision."""
    run = run_sweep()
    proposal = run.proposals.first()
    sweep_services.judge(proposal, verdict="wrong", actor=curator)
    (row,) = [r for r in sweep_selectors.precision(run) if r["elsewhere"]]
    assert (row["sampled"], row["wrong"], row["elsewhere"]) == (0, 0, 1)
    assert row["precision"] is None


def test_the_apply_preview_counts_a_group_of_copies_as_its_merges(palace, curator):
    """Three copies of one memory are three pairs and two merges: the preview had said three
    (23 merges foretold, 13 done, in a curator's trial)."""
    run = run_sweep()
    options = {"threshold": 0.99, "tiers": ["exact", "normalized"], "discard_below": False}
    reach = sweep_selectors.apply_reach(run, merge_tiers=MERGE_TIERS, **options)
    applied = sweep_services.apply(run, actor=curator, **options)
    assert reach["merge"] == applied.merged
    assert reach["grouped"] >= 1


def test_the_proposals_table_shows_what_changed_wherever_it_is(client, curator, palace):
    """Texts cut at 90 characters hid a change past the cut: both sides looked the same."""
    room = palace["original"].room
    long = (
        "The nightly export of the billing ledger to the finance team's shared drive, with "
        "its checksums and the audit trail, runs every night at "
    )
    legacy(room, long + "midnight.")
    legacy(room, long + "noon.")
    run = run_sweep()
    client.force_login(curator)
    page = client.get(f"/sweeps/{run.pk}/").content.decode()
    assert "noon" in page.split("<h2>Proposals</h2>")[1]


def test_the_reverse_preview_counts_the_pairs_recorded_distinct(palace, curator):
    run = run_sweep()
    proposal = run.proposals.first()
    sweep_services.judge(proposal, verdict="wrong", actor=curator)
    sweep_services.apply(run, threshold=0.9, actor=curator)
    assert sweep_selectors.reverse_reach(run)["distinct_again"] == 1
