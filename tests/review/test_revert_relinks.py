"""An entity a curator's alias or merge redirected answers for itself again when the decision is
undone, and gets the links a redirect kept from it: with the entities created while it was
redirected, or created while they were (a sighting's fuzzy lookups skip a redirected entity).
A helper's soak over HTTP found such a pair unlinked after an undo; only an entity sweep
proposed it."""

import threading

import pytest
from django.db import connection

from dedup import policy
from dedup import services as write
from dedup.services import DedupConfig, entity_alias_add, entity_relinked
from palace.models import AuditAction, AuditEntry, AuditTarget, DistinctPair, Entity, EntityLink
from review import services as decisions
from review.selectors import audit as audit_selectors
from review.services import reverts
from review.services import sweeps as sweep_services
from tests.review.lock_waits import in_thread, wait_until_blocked

pytestmark = pytest.mark.django_db


def linked(a: Entity, b: Entity) -> EntityLink | None:
    return EntityLink.objects.filter(newer__in=(a, b), older__in=(a, b)).first()


def redirected(action, curator):
    """ "Kowalczykaa" (two edits from "Kowalczyk": a link) aliased or merged into it."""
    write.entity_resolve(name="Kowalczyk", kind="person")
    resembling = write.entity_resolve(name="Kowalczykaa", kind="person")
    (link,) = resembling.possible
    decision = decisions.decide(item=f"e{link.pk}", action=action, actor=curator)
    return resembling.entity, decision


@pytest.mark.parametrize("action", ["merge", "add_alias"])
def test_an_undo_links_the_entities_created_while_the_decision_held(
    dedup_settings, curator, action
):
    entity, decision = redirected(action, curator)
    # Two edits from the redirected entity, four from the canonical one: its sighting did not
    # see the redirected entity (an alias, if any, is now the canonical one's, and linked).
    meanwhile = write.entity_resolve(name="Kowalczykaabb", kind="person")
    assert meanwhile.created
    assert linked(meanwhile.entity, entity) is None

    (undo,) = decisions.revert(decision=decision, actor=curator)
    link = linked(meanwhile.entity, entity)
    assert link is not None, "linked on undo"
    assert (link.newer_id, link.older_id, link.distance) == (meanwhile.entity.pk, entity.pk, 2)
    assert link.status == EntityLink.Status.OPEN
    assert undo.data["linked"] == [link.pk]
    # What an entity sweep would have proposed is linked: it proposes nothing.
    run = sweep_services.execute(sweep_services.start(entities=True, threshold=0.75))
    assert not run.proposals.exists()


def test_an_undo_links_a_typo_of_the_entity_that_would_have_converged(dedup_settings, curator):
    """One edit from the redirected entity: its sighting would have converged on it. Two
    entities stand now; a link at one edit is what can be written, for a curator to merge."""
    entity, decision = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaab", kind="person").entity
    decisions.revert(decision=decision, actor=curator)
    link = linked(meanwhile, entity)
    assert link is not None
    assert link.distance == 1


def test_an_undo_links_no_entity_created_before_the_decision(dedup_settings, curator):
    """Those were judged against the entity when they were sighted, while it was current."""
    canonical = write.entity_resolve(name="Kowalczyk", kind="person").entity
    resembling = write.entity_resolve(name="Kowalczykaa", kind="person")
    before = write.entity_resolve(name="Kowalczykaabb", kind="person").entity
    linked(before, resembling.entity).delete()  # as if the cap of five had left it out
    other = linked(resembling.entity, canonical)
    decision = decisions.decide(item=f"e{other.pk}", action="merge", actor=curator)
    (undo,) = decisions.revert(decision=decision, actor=curator)
    assert linked(before, resembling.entity) is None
    assert "linked" not in undo.data


def test_an_undo_links_no_pair_recorded_distinct(dedup_settings, curator):
    entity, decision = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaab", kind="person").entity
    DistinctPair.objects.create(
        **DistinctPair.of(DistinctPair.Kind.ENTITY, entity.pk, meanwhile.pk)
    )
    decisions.revert(decision=decision, actor=curator)
    assert linked(meanwhile, entity) is None


def test_an_undo_links_only_what_the_policy_would(dedup_settings, curator):
    entity, decision = redirected("merge", curator)
    other_kind = write.entity_resolve(name="Kowalczykaab", kind="tool").entity
    no_kind = write.entity_resolve(name="Kowalczykzz").entity  # two edits from both
    too_far = write.entity_resolve(name="Kowalczykaabbc", kind="person").entity  # three edits
    decisions.revert(decision=decision, actor=curator)
    assert linked(other_kind, entity) is None  # a tool is never a person
    assert linked(no_kind, entity) is not None  # a name without a kind may be anyone's
    assert linked(too_far, entity) is None


def test_an_undo_links_a_name_near_an_alias_a_person_recorded_for_a_short_name(
    dedup_settings, curator
):
    """ "Zbi" is too short for any fuzzy rule, but "Zbyszek", an alias a person recorded for it,
    is not: a name near the alias, sighted while "Zbi" was merged away, is linked on undo."""
    short = write.entity_resolve(name="Zbi", kind="person").entity
    entity_alias_add(entity=short, alias="Zbyszek")
    (link,) = write.entity_resolve(name="Zbyszekow", kind="person").possible
    decision = decisions.decide(
        item=f"e{link.pk}", action="merge", actor=curator, canonical=str(link.newer.uuid)
    )
    meanwhile = write.entity_resolve(name="Zbyszak", kind="person").entity
    decisions.revert(decision=decision, actor=curator)
    assert linked(meanwhile, short) is not None


def test_two_undos_in_either_order_leave_the_pair_linked(dedup_settings, curator):
    """A name sighted while "Kowalczykaa" was merged away, then merged itself into a third: its
    undo comes last, and judges the older entity it never saw (the first undo found the newer
    one merged away still)."""
    entity, first = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaabb", kind="person").entity
    third = write.entity_resolve(name="Kowalczykaabbcd", kind="person")
    link = next(link for link in third.possible if link.older_id == meanwhile.pk)
    second = decisions.decide(
        item=f"e{link.pk}", action="merge", actor=curator, canonical=str(third.entity.uuid)
    )
    decisions.revert(decision=first, actor=curator)
    assert linked(meanwhile, entity) is None  # merged away still: not current, not judged
    decisions.revert(decision=second, actor=curator)
    assert linked(meanwhile, entity) is not None


def test_an_undo_keeps_the_cap_a_sighting_keeps(dedup_settings, curator):
    """A name whose sighting linked five entities closer than the redirected one would have
    left it out: the undo does too (a helper's soak saw one undo write 52 links)."""
    unlinked = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)
    for first in "QVWXZ":  # one edit from the name below (0.92), three from the entity
        write.entity_resolve(name=f"{first}owalczykaabb", kind="person", config=unlinked)
    entity, decision = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaabb", kind="person")  # 0.85 to the entity
    assert len(meanwhile.possible) == 5
    decisions.revert(decision=decision, actor=curator)
    assert linked(meanwhile.entity, entity) is None


def test_an_undo_links_nothing_while_fuzzy_matching_is_off(dedup_settings, curator):
    entity, decision = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaabb", kind="person").entity
    dedup_settings.CASTELLAN_DEDUP_ENTITY_FUZZY = False
    decisions.revert(decision=decision, actor=curator)
    assert linked(meanwhile, entity) is None


def test_one_undo_keeps_the_cap_for_the_entity_it_makes_current(dedup_settings, curator):
    """The entity made current is the newer side of two pairs it never saw (both older ones
    were merged away when it was sighted, and made current while it was merged away itself):
    its links are counted as they are written, so the farther of the two is left out (a
    helper's reading of the code found it linked to both, six links in all)."""

    def merged_into_older(name, curator):
        (link,) = write.entity_resolve(name=name, kind="person").possible
        return decisions.decide(item=f"e{link.pk}", action="merge", actor=curator)

    write.entity_resolve(name="Kowalczykabcd", kind="person")
    first = merged_into_older("Kowalczykab", curator)  # two edits from the name above
    write.entity_resolve(name="Bbkowalcz", kind="person")
    second = merged_into_older("Kowalcz", curator)
    for name in ("Zowalczyk", "Kowzlczyk", "Kowalqzyk", "Kowalczyq"):
        write.entity_resolve(name=name, kind="person")
    sighted = write.entity_resolve(name="Kowalczyk", kind="person")  # one edit from each: four
    assert len(sighted.possible) == 4
    third = decisions.decide(item=f"e{sighted.possible[0].pk}", action="merge", actor=curator)
    for decision in (first, second, third):
        decisions.revert(decision=decision, actor=curator)
    similarities = EntityLink.objects.filter(newer=sighted.entity).values_list(
        "similarity", flat=True
    )
    assert len(similarities) == policy.MAX_POSSIBLE
    assert round(min(similarities), 3) == 0.818  # "Kowalczykab", not "Kowalcz" (0.778)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL")
@pytest.mark.parametrize("name", ["Kowalczykaabb", "Zbyszak"])
def test_a_name_sighted_while_the_undo_commits_is_linked(
    dedup_settings, curator, monkeypatch, name
):
    """The undo is held after it judged the entities created meanwhile and before its commit,
    and a name within reach is sighted then: its lookup still sees the entity redirected. The
    undo counted the entity in the key bands before it held it, so the sighting waits there for
    the undo's commit and looks again. Before, it made its entity unlinked."""
    entity, decision = redirected("merge", curator)
    entity_alias_add(entity=entity, alias="Zbyszek")  # of another length than the name
    judged, commit = threading.Event(), threading.Event()

    def links_then_wait(entity_id, windows):
        links = entity_relinked(entity_id, windows)
        judged.set()
        commit.wait(10)
        return links

    monkeypatch.setattr(reverts, "entity_relinked", links_then_wait)
    errors: list[BaseException] = []
    undo = in_thread(lambda: decisions.revert(decision=decision, actor=curator), errors)
    assert judged.wait(10)
    sighted = []
    sighting = in_thread(
        lambda: sighted.append(write.entity_resolve(name=name, kind="person").entity),
        errors,
    )
    blocked = wait_until_blocked(sighting, timeout=2)
    commit.set()
    undo.join(10)
    sighting.join(10)
    assert errors == []
    assert blocked  # the sighting waited on the bands the undo held
    # One edit from the alias: converged on the entity; two from its name: linked to it.
    assert sighted[0] == entity or linked(sighted[0], entity) is not None


def test_the_console_says_what_an_undo_linked(dedup_settings, curator, client):
    write.entity_resolve(name="Kowalczyk", kind="person")
    (link,) = write.entity_resolve(name="Kowalczykaa", kind="person").possible
    client.force_login(curator)
    client.post(f"/items/e{link.pk}/decide", {"action": "merge"})
    write.entity_resolve(name="Kowalczykaabb", kind="person")
    decision = AuditEntry.objects.get(action="review.merge")
    response = client.post("/undo", {"decision": decision.pk}, follow=True)  # the offer's form
    assert response.status_code == 200
    assert "linked to 1 entity a redirect kept from it" in response.content.decode()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL index")
def test_an_undo_reads_the_decisions_that_redirected_by_their_index(dedup_settings):
    """The index must match the expression the query is built with (`before #> '{other,id}'`),
    which Django renders: were it to change, the undo would scan the whole audit log."""
    AuditEntry.objects.bulk_create(
        AuditEntry(
            action=AuditAction.decision("merge"),
            target_type=AuditTarget.REVIEW_ITEM,
            target_id=f"e{n}",
            before={"other": {"id": n}},
            data={"item": f"e{n}"},
        )
        for n in range(1, 2001)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE palace_auditentry")
    assert "audit_redirected_entity" in audit_selectors.redirecting([1, 2]).explain()


def test_the_api_names_the_links_an_undo_wrote(dedup_settings, curator):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    entity, decision = redirected("merge", curator)
    meanwhile = write.entity_resolve(name="Kowalczykaabb", kind="person").entity
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    response = client.post(f"/api/review/decisions/{decision.pk}/revert", {}, format="json")
    assert response.status_code == 200
    (undo,) = response.json()
    assert undo["linked"] == [f"e{linked(meanwhile, entity).pk}"]
    assert undo["not_restored"] == []
