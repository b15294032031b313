"""Issue 13, defect 6: applying a sweep never links a pair the curator judged "not the same"
(it records the pair distinct instead), and its result explains every difference from the
what-if table, stored on the run and shown on its page."""

import pytest
from django.utils.html import escape

from dedup import services as write
from dedup.errors import Conflict
from palace.models import AuditEntry, DistinctPair, DrawerLink
from review import services as decisions
from review.models import Proposal, SweepRun
from review.selectors import sweeps as sweep_selectors
from review.services import sweeps as sweep_services
from tests.review.sweep_data import OFF, legacy

pytestmark = pytest.mark.django_db
FACTS = [
    "The staging database is refreshed from an anonymised production dump every Monday.",
    "Backups run nightly at two in the morning and are kept for thirty days on the NAS.",
    "The deploy script must run database migrations before restarting the web workers.",
]


@pytest.fixture
def run(dedup_settings):
    """Three facts, each written twice (exact copies) and once with a typo (near)."""
    room = write.room_get_or_create(wing="ops", room="runbooks")
    for fact in FACTS:
        legacy(room, fact)
        legacy(room, fact)
        legacy(room, fact.replace("database", "databse").replace("nightly", "nigthly"))
    return sweep_services.execute(sweep_services.start(threshold=0.9))


def judge_wrong(run, curator, count):
    judged = list(run.proposals.order_by("pk")[:count])
    for proposal in judged:
        sweep_services.judge(proposal, verdict="wrong", actor=curator)
    return judged


def test_a_pair_judged_not_the_same_is_recorded_distinct_and_never_linked(run, curator):
    (wrong,) = judge_wrong(run, curator, 1)
    applied = sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    wrong.refresh_from_db()
    assert wrong.status == Proposal.Status.DISTINCT
    assert wrong.applied_link_id is None
    assert not DrawerLink.objects.filter(newer_id=wrong.newer_pk, older_id=wrong.older_pk).exists()
    assert DistinctPair.objects.filter(
        **DistinctPair.of("drawer", wrong.newer_pk, wrong.older_pk)
    ).exists()
    assert applied.distinct == 1


def test_the_result_adds_up_to_the_what_if_table_and_says_why(run, curator):
    judge_wrong(run, curator, 2)
    already = run.proposals.exclude(verdict="wrong").order_by("pk").first()
    write.drawer_link(
        newer=already.newer_drawer, older=already.older_drawer, verdict="near", signals={}
    )
    what_if = sweep_selectors.summary(run)["if_applied_at"]["0.90"]
    applied = sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    outcome = applied.outcome
    promised = what_if["links"] + what_if["merges"] + what_if["distinct"]
    assert outcome["proposed"] == promised
    assert sum(outcome["outcomes"].values()) == promised
    assert outcome["outcomes"]["distinct"] == 2
    assert outcome["outcomes"]["already_linked"] == 1
    assert outcome["outcomes"]["linked"] == promised - 3
    assert applied.explained == (
        f"{promised} proposed at or above 0.9: {promised - 3} linked, "
        "2 judged distinct -> recorded distinct, 1 already linked."
    )


def test_the_outcome_is_stored_on_the_run_and_shown_on_its_page(run, curator, client):
    judge_wrong(run, curator, 1)
    client.force_login(curator)
    response = client.post(
        f"/sweeps/{run.pk}/", {"action": "apply", "threshold": "0.9", "confirm": "1"}, follow=True
    )
    run.refresh_from_db()
    (stored,) = run.applications
    assert stored["by"] == curator.username
    assert "1 judged distinct -> recorded distinct" in stored["explained"]
    page = response.content.decode()
    assert page.count(escape(stored["explained"])) == 2  # the flash message and the run's history


def test_an_already_linked_pair_is_left_to_the_queue_and_survives_the_reverse(run, curator):
    proposal = run.proposals.order_by("pk").first()
    link, _ = write.drawer_link(
        newer=proposal.newer_drawer, older=proposal.older_drawer, verdict="near", signals={}
    )
    sweep_services.apply(run, threshold=0.9, actor=curator)
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.PROPOSED
    sweep_services.reverse(run, actor=curator)
    assert DrawerLink.objects.filter(pk=link.pk, status="open").exists()


def test_reverse_forgets_the_distinct_pairs_the_apply_recorded(run, curator):
    judge_wrong(run, curator, 2)
    kept = run.proposals.exclude(verdict="wrong").order_by("pk").first()
    earlier = DistinctPair.objects.create(**DistinctPair.of("drawer", *_pair(kept)))
    sweep_services.apply(run, threshold=0.9, actor=curator)
    assert DistinctPair.objects.count() == 3
    sweep_services.reverse(run, actor=curator)
    assert list(DistinctPair.objects.values_list("pk", flat=True)) == [earlier.pk]
    assert set(run.proposals.values_list("status", flat=True)) == {"proposed"}


def test_a_judged_distinct_pair_below_the_threshold_is_recorded_too(run, curator):
    low = run.proposals.order_by("score", "pk").first()
    sweep_services.judge(low, verdict="wrong", actor=curator)
    applied = sweep_services.apply(run, threshold=1.0, merge_tiers=(), actor=curator)
    low.refresh_from_db()
    assert low.status == Proposal.Status.DISTINCT
    assert applied.outcome["below"] == {"distinct": 1}
    assert "Below it: 1 judged distinct -> recorded distinct." in applied.explained


def _pair(proposal):
    return proposal.newer_pk, proposal.older_pk


def test_the_verdict_behind_a_recorded_distinct_pair_stands_until_the_run_is_reversed(run, curator):
    (wrong,) = judge_wrong(run, curator, 1)
    verdict = AuditEntry.objects.get(action="review.wrong")
    sweep_services.apply(run, threshold=0.9, actor=curator)
    with pytest.raises(Conflict, match="reverse the run first"):
        decisions.revert(decision=verdict, actor=curator)
    sweep_services.reverse(run, actor=curator)
    decisions.revert(decision=verdict, actor=curator)
    wrong.refresh_from_db()
    assert (wrong.verdict, wrong.status) == ("", Proposal.Status.PROPOSED)


def test_a_second_apply_counts_what_the_first_did_as_applied_before(run, curator):
    first = sweep_services.apply(run, threshold=0.9, tiers=["exact"], merge_tiers=(), actor=curator)
    second = sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    assert second.outcome["outcomes"]["applied_before"] == first.linked
    assert len(SweepRun.objects.get(pk=run.pk).applications) == 2


def test_the_same_apply_sent_twice_is_refused_the_second_time(run, curator):
    sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    with pytest.raises(Conflict, match=r"Nothing to apply: 9 proposed .* 9 applied before") as e:
        sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    assert e.value.code == "nothing_to_apply"


def test_an_apply_refused_as_a_repeat_stores_nothing(run, curator):
    sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    with pytest.raises(Conflict):
        sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    assert len(SweepRun.objects.get(pk=run.pk).applications) == 1
    assert AuditEntry.objects.filter(action="sweep.apply").count() == 1


def test_a_sweep_that_merged_three_exact_copies_is_reversed(dedup_settings, curator):
    """The copies were current together before the sweep: restoring them is its prior state,
    not a copy written since (which alone refuses a merge's undo)."""
    room = write.room_get_or_create(wing="ops", room="triples")
    copies = [write.drawer_write(room=room, content=FACTS[0], config=OFF).drawer for _ in range(3)]
    run = sweep_services.execute(sweep_services.start(wing="ops", threshold=0.9))
    sweep_services.apply(run, threshold=0.99, actor=curator)
    sweep_services.reverse(run, actor=curator)
    current = room.drawers.current().filter(pk__in=[c.pk for c in copies])
    assert current.count() == 3


def test_a_proposal_whose_drawer_was_deleted_is_still_judged_from_its_texts(run, curator):
    """A proposal keeps both texts as proposed: a judgement measures what the sweep proposed,
    which a later delete does not change (the concurrency trial asked; kept on purpose)."""
    proposal = run.proposals.order_by("pk").first()
    texts = dict(proposal.texts)
    write.drawer_delete(drawer=proposal.newer_drawer, actor=curator)
    proposal.refresh_from_db()
    assert proposal.texts == texts
    sweep_services.judge(proposal, verdict="same", actor=curator)
    proposal.refresh_from_db()
    assert proposal.verdict == "same"


def _promised(run, label):
    return sum(sweep_selectors.summary(run)["if_applied_at"][label].values())


def test_the_what_if_table_leaves_out_what_was_applied_and_counts_it_again_once_reversed(
    run, curator
):
    """The operator's trial: after an apply at 0.98 the table still promised its merges at 1.00,
    which an apply then refused as applied before. It counts what an apply would still reach."""
    before = sweep_selectors.summary(run)["if_applied_at"]
    assert before["1.00"]["merges"] == 3
    assert sweep_services.apply(run, threshold=1.0, actor=curator).merged == 3
    after = sweep_selectors.summary(run)["if_applied_at"]
    assert after["1.00"] == {"links": 0, "merges": 0, "distinct": 0}
    with pytest.raises(Conflict, match=r"Nothing to apply: 3 proposed .* 3 applied before"):
        sweep_services.apply(run, threshold=1.0, actor=curator)
    # What is left at 0.90 is what an apply at 0.90 links: the near pairs whose sides are
    # current (a typo's pair with a merged-away copy is not).
    left = _promised(run, "0.90")
    assert 0 < left < before["0.90"]["links"]
    applied = sweep_services.apply(run, threshold=0.9, merge_tiers=(), actor=curator)
    assert applied.linked == left
    assert _promised(run, "0.90") == 0
    sweep_services.reverse(run, actor=curator)
    assert sweep_selectors.summary(run)["if_applied_at"] == before


def test_the_what_if_table_leaves_out_the_proposals_discarded_or_recorded_distinct(run, curator):
    judge_wrong(run, curator, 1)
    before = sweep_selectors.summary(run)["if_applied_at"]["0.90"]
    sweep_services.apply(run, threshold=1.0, merge_tiers=(), discard_below=True, actor=curator)
    after = sweep_selectors.summary(run)["if_applied_at"]["0.90"]
    assert after["distinct"] == 0  # recorded distinct by the apply
    assert after["links"] + after["merges"] == 0  # those at 1.00 linked, the rest discarded
    assert before["distinct"] == 1
    sweep_services.reverse(run, actor=curator)
    assert sweep_selectors.summary(run)["if_applied_at"]["0.90"] == before


ALLOWED = "Friday deploys are allowed for the billing service: \u2705"


@pytest.mark.parametrize("stored_before_the_gate", [False, True], ids=["new", "stored-before"])
def test_an_apply_never_merges_a_pair_whose_symbol_changed(
    dedup_settings, curator, stored_before_the_gate
):
    """ "...: ✅" and "...: ❌" are the same words (normalized): an apply merging normalized pairs
    links them, and leaves the merge to a person, also for a proposal made before the gate."""
    room = write.room_get_or_create(wing="ops", room="deploys")
    legacy(room, ALLOWED)
    legacy(room, ALLOWED.replace("\u2705", "\u274c"))
    run = sweep_services.execute(sweep_services.start(threshold=0.9))
    (proposal,) = run.proposals.all()
    assert (proposal.tier, proposal.gates["symbols_differ"]) == ("normalized", True)
    if stored_before_the_gate:
        gates = {k: v for k, v in proposal.gates.items() if k != "symbols_differ"}
        Proposal.objects.filter(pk=proposal.pk).update(gates=gates)
    sweep_services.apply(run, threshold=0.9, merge_tiers=("normalized",), actor=curator)
    assert Proposal.objects.get().status == Proposal.Status.LINKED
    assert DrawerLink.objects.get().status == DrawerLink.Status.OPEN


def test_a_judgement_below_the_threshold_is_counted_as_apply_records_it(run, curator):
    """A curator's trial: the what-if table showed 0 judged distinct at a threshold above the
    judged proposal's score, and the apply at that threshold then recorded it distinct."""
    judged = run.proposals.filter(score__lt=0.999).order_by("pk").first()
    sweep_services.judge(judged, verdict="wrong", actor=curator)
    above = judged.score + 0.001
    what_if = sweep_selectors.summary(run, thresholds=[above])["if_applied_at"]
    (counts,) = what_if.values()
    sweep_services.apply(run, threshold=above, merge_tiers=(), actor=curator)
    assert counts["distinct"] == 1
    assert DistinctPair.objects.count() == 1  # recorded by the apply, below its threshold
