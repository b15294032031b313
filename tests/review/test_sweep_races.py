"""A sweep's apply and reverse against curators' work on the same proposals and links.

- Reverting a "not the same" judgement while the run is applied: the revert judged the proposal
  unheld, so it undid the verdict of a pair the apply had just recorded distinct (200 where a
  serial revert is refused 409 `revert_blocked`). It holds the proposal now, after its audit row.
- Reversing an entity run while curators delete its links: the reverse locked the proposals,
  then the links, and each decision held its entities, then the link, then set its proposal's
  applied link to null: a deadlock (503). The reverse holds the run's entities first now.
- One merged-away drawer deleted blocked every reverse of its run for good (409
  `revert_target_deleted`, naming nothing): the reverse now reverts that merge as far as it can
  be and names what it could not restore.

The races run in real threads, each on its own connection, on PostgreSQL only."""

import io
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from dedup import services as write
from dedup.errors import DomainError
from dedup.services import DedupConfig
from palace.models import AuditEntry, DistinctPair, Drawer, EntityLink
from review import services as decisions
from review.models import Proposal
from review.services import actions, sweep_apply
from review.services import sweeps as sweep_services
from tests.conftest import person_client
from tests.races import race, race_codes
from tests.review.lock_waits import in_thread, wait_until_blocked
from tests.review.sweep_data import legacy

RACES = (
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres_only,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="real concurrency needs PostgreSQL"
    ),
)


def on_postgres(test):
    for mark in RACES:
        test = mark(test)
    return test


FACTS = [
    "Refresh the staging database from an anonymised production dump every Monday.",
    "Backups run nightly at two in the morning and are kept for thirty days on the NAS.",
    "The deploy script must run database migrations before restarting the web workers.",
    "Rotate the API tokens of departed agents within one working day of their leaving.",
]
STRICT = DedupConfig(enabled=True, near_threshold=0.9, entity_fuzzy=False)


def drawer_run(wing: str = "ops"):
    """Each fact twice (exact copies, merged by apply) and once with a typo (near), swept."""
    room = write.room_get_or_create(wing=wing, room="runbooks")
    for fact in FACTS:
        legacy(room, fact)
        legacy(room, fact)
        legacy(room, fact.replace("the", "teh", 1))
    return sweep_services.execute(sweep_services.start(wing=wing, threshold=0.9))


def judged_wrong(run, curator, count: int) -> list[tuple[Proposal, AuditEntry]]:
    proposals = list(run.proposals.order_by("pk")[:count])
    return [
        (p, decisions.decide(item=f"p{p.pk}", action="wrong", actor=curator)) for p in proposals
    ]


def kept_apart_unjudged(proposal: Proposal) -> bool:
    """The inconsistency: recorded distinct by the apply on a verdict that was reverted."""
    proposal.refresh_from_db()
    return proposal.status == Proposal.Status.DISTINCT and proposal.verdict != "wrong"


# --- bug: a verdict reverted while the run is applied ------------------------------------------


@on_postgres
def test_a_verdict_reverted_while_the_apply_holds_it_is_refused(
    dedup_settings, monkeypatch, curator
):
    """The revert comes once the apply holds the proposals (and before it commits): it waits,
    then sees the pair recorded distinct and is refused, as it is after the apply."""
    run = drawer_run()
    ((proposal, entry),) = judged_wrong(run, curator, 1)
    answers: list[str] = []
    errors: list[BaseException] = []

    def curator_revert():
        try:
            decisions.revert(decision=entry.pk, actor=curator)
            answers.append("ok")
        except DomainError as error:
            answers.append(error.code)

    settle, blocked = sweep_apply._Application.settle, []

    def racing(self, proposal):
        if not blocked:
            other = in_thread(curator_revert, errors)
            blocked.append((other, wait_until_blocked(other)))
        return settle(self, proposal)

    monkeypatch.setattr(sweep_apply._Application, "settle", racing)
    sweep_services.apply(run, threshold=0.9, actor=curator)
    (other, waited), *_ = blocked
    other.join()
    assert waited is True
    assert errors == []
    assert answers == ["revert_blocked"]
    assert not kept_apart_unjudged(proposal)
    assert AuditEntry.objects.filter(action="review.revert").count() == 0


@on_postgres
def test_verdicts_reverted_while_the_run_is_applied_never_leave_a_pair_kept_apart(
    dedup_settings, curator, other_curator
):
    """As the race trial over HTTP did (8 of 12 reverts answered 200 wrongly): each round, the
    apply and the reverts of four "not the same" judgements at once. A revert is refused once
    the apply recorded its pair distinct, or lands first and the apply then treats the pair as
    unjudged; never both."""
    for round_ in range(6):
        run = drawer_run(f"ops{round_}")
        judged = judged_wrong(run, curator, 4)

        def apply(run=run):
            return sweep_services.apply(run, threshold=0.9, actor=curator)

        reverts = [
            lambda entry=entry: decisions.revert(decision=entry.pk, actor=other_curator)
            for _, entry in judged
        ]
        codes = race_codes(apply, *reverts)
        assert codes[0] == "ok"
        assert set(codes[1:]) <= {"ok", "revert_blocked"}
        for (proposal, _), code in zip(judged, codes[1:], strict=True):
            assert not kept_apart_unjudged(proposal), (round_, codes)
            assert (code == "ok") == (proposal.verdict == ""), (round_, codes)


# --- bug: an entity run reversed while curators delete its links -------------------------------


def entity_run(tag: str = "", pairs: int = 6):
    """Pairs of names two edits apart, written while fuzzy matching was off (each its own
    entity), swept and applied: one open link per pair, made by the run."""
    for number in range(pairs):
        name = f"Rhea Quillon{tag}{number}"
        write.entity_resolve(name=name, kind="project", config=STRICT)
        write.entity_resolve(name=f"{name} X", kind="project", config=STRICT)
    run = sweep_services.execute(sweep_services.start(entities=True, threshold=0.75))
    sweep_services.apply(run, threshold=0.75, actor=None)
    return run


def run_links(run) -> list[int]:
    applied = run.proposals.filter(applied_entity_link__isnull=False)
    return sorted(applied.values_list("applied_entity_link_id", flat=True))


@on_postgres
def test_a_reverse_waits_for_a_decision_holding_one_of_its_links(
    dedup_settings, monkeypatch, curator
):
    """The decision holds its link's entities and the link; the reverse comes then and waits
    at the entities (it locked the proposals and waited at the link, and the decision's delete
    then waited on the proposal: a deadlock); the decision finishes, then the reverse."""
    run = entity_run()
    links = run_links(run)
    link = links[0]
    holding, go = threading.Event(), threading.Event()
    real_apply = actions.DeleteLink.apply

    def held_apply(self, target, **kwargs):
        holding.set()
        go.wait(10)
        return real_apply(self, target, **kwargs)

    monkeypatch.setattr(actions.DeleteLink, "apply", held_apply)
    errors: list[BaseException] = []
    decider = in_thread(
        lambda: decisions.decide(item=f"e{link}", action="delete_link", actor=curator), errors
    )
    assert holding.wait(10)
    reverser = in_thread(lambda: sweep_services.reverse(run, actor=curator), errors)
    waited = wait_until_blocked(reverser)
    go.set()
    for thread in (decider, reverser):
        thread.join()
    assert waited is True
    assert errors == []
    assert not EntityLink.objects.filter(pk__in=links).exists()
    assert not run.proposals.exclude(status=Proposal.Status.PROPOSED).exists()


@on_postgres
def test_an_entity_run_reversed_beside_delete_link_decisions_never_deadlocks(
    dedup_settings, curator, other_curator
):
    """As the race trial did (7 deadlocks in 4 rounds over HTTP): each round, the reverse and
    delete_link decisions on links the run made, at once. Each decision is made (201) or finds
    its link gone (404 or 409); the reverse undoes the rest."""
    for round_ in range(4):
        run = entity_run(tag=chr(ord("a") + round_))
        links = run_links(run)

        def reverse(run=run):
            return sweep_services.reverse(run, actor=curator)

        deletes = [
            lambda link=link: decisions.decide(
                item=f"e{link}", action="delete_link", actor=other_curator
            )
            for link in links[:6]
        ]
        answers = race(reverse, *deletes)  # a deadlock raises here
        assert not isinstance(answers[0], DomainError), answers[0]
        assert all(
            not isinstance(a, DomainError) or a.code in ("item_not_found", "already_decided")
            for a in answers[1:]
        ), answers
        assert not EntityLink.objects.filter(pk__in=links).exists()


# --- a reverse blocked for good by one deleted drawer ------------------------------------------


@pytest.fixture
def applied(dedup_settings, curator):
    run = drawer_run()
    sweep_services.apply(run, threshold=0.9, actor=curator)
    return run


def run_merges(run) -> list[AuditEntry]:
    merges = AuditEntry.objects.filter(action="review.merge", data__evidence__sweep=run.pk)
    return list(merges.order_by("pk"))


@pytest.fixture
def one_merged_away_deleted(applied):
    """The first merge's merged-away drawer, deleted since: (run, that merge)."""
    merge = run_merges(applied)[0]
    write.drawer_delete(drawer=Drawer.objects.get(pk=merge.before["other"]["id"]))
    return applied, merge


@pytest.mark.django_db
def test_a_reverse_undoes_the_rest_when_one_merged_away_drawer_was_deleted(
    one_merged_away_deleted, curator
):
    run, merge = one_merged_away_deleted
    applied_before = run.proposals.filter(status__in=sweep_apply.APPLIED).count()
    assert sweep_services.reverse(run, actor=curator).undone == applied_before
    assert not run.proposals.exclude(status=Proposal.Status.PROPOSED).exists()
    others = [m.before["other"]["id"] for m in run_merges(run) if m.pk != merge.pk]
    assert len(others) == len(FACTS) - 1
    assert Drawer.objects.current().filter(pk__in=others).count() == len(others)
    assert not DistinctPair.objects.exists()
    assert not AuditEntry.objects.filter(action="review.merge").exclude(
        pk__in=AuditEntry.objects.filter(action="review.revert").values("reverts")
    )


@pytest.mark.django_db
def test_that_merge_is_reverted_as_far_as_it_can_be(one_merged_away_deleted, curator):
    """The kept drawer's consolidation is written back: the state in which the merge never
    happened and the drawer was then deleted. The deletion, a later write, stays."""
    run, merge = one_merged_away_deleted
    sweep_services.reverse(run, actor=curator)
    kept = merge.before["canonical"]
    assert Drawer.objects.get(pk=kept["id"]).consolidation == kept["consolidation"]
    assert not Drawer.objects.filter(pk=merge.before["other"]["id"]).exists()
    revert_row = AuditEntry.objects.get(action="review.revert", reverts=merge)
    assert any(
        f"drawer {merge.before['other']['id']}" in what for what in revert_row.data["not_restored"]
    )


@pytest.mark.django_db
def test_the_reverse_row_names_what_it_could_not_restore(one_merged_away_deleted, curator):
    run, merge = one_merged_away_deleted
    sweep_services.reverse(run, actor=curator)
    row = AuditEntry.objects.get(action="sweep.reverse")
    revert_row = AuditEntry.objects.get(action="review.revert", reverts=merge)
    assert row.data["not_restored"] == [
        {
            "proposal": merge.data["evidence"]["proposal"],
            "decision": merge.pk,
            "revert": revert_row.pk,
            "not_restored": revert_row.data["not_restored"],
        }
    ]


@pytest.mark.django_db
def test_the_api_reverses_such_a_run(one_merged_away_deleted, curator):
    run, _ = one_merged_away_deleted
    response = person_client(curator).post(f"/api/sweeps/{run.pk}/reverse")
    assert response.status_code == 202
    reversed_ = response.json()["job"]["reversed"]  # tests run the job at once
    assert reversed_["undone"] > 0
    row = AuditEntry.objects.get(action="sweep.reverse")
    assert reversed_["not_restored"] == row.data["not_restored"]


@pytest.mark.django_db
def test_the_command_says_what_stays(one_merged_away_deleted, curator):
    run, merge = one_merged_away_deleted
    away = merge.before["other"]["id"]
    out = io.StringIO()
    call_command("sweep_reverse", str(run.pk), stdout=out)
    proposal = merge.data["evidence"]["proposal"]
    assert f"undone in part: proposal {proposal}: " in out.getvalue()
    assert f"drawer {away}" in out.getvalue()


@pytest.mark.django_db
def test_the_console_says_what_stays(one_merged_away_deleted, curator):
    run, merge = one_merged_away_deleted
    client = Client()
    client.force_login(curator)
    page = client.post(f"/sweeps/{run.pk}/", {"action": "reverse", "confirm": "1"}, follow=True)
    proposal = merge.data["evidence"]["proposal"]
    assert f"Undone in part: proposal {proposal}: " in page.content.decode()


@pytest.mark.django_db
def test_that_merge_reverted_alone_is_undone_in_part_naming_the_deleted_drawer(
    one_merged_away_deleted, curator
):
    """A decision reverted on its own is undone as far as it can be, as the sweep's reverse
    does, its answer saying that the deleted drawer stays deleted."""
    _, merge = one_merged_away_deleted
    away = merge.before["other"]["id"]
    response = person_client(curator).post(f"/api/review/decisions/{merge.pk}/revert")
    assert response.status_code == 200
    (revert,) = response.json()
    assert f"the merged-away drawer (drawer {away}), deleted since" in revert["not_restored"][1]


@pytest.mark.django_db
def test_a_refused_reverse_names_the_proposal_and_its_merge(applied, curator):
    """A curator merged one of the run's near links since, into a drawer a merge of the run
    kept: the reverse is refused (revert it first), and says which proposal and decision."""
    near = applied.proposals.filter(status=Proposal.Status.LINKED, tier="near")
    link = next(
        p.applied_drawer_link
        for p in near.select_related("applied_drawer_link__older", "applied_drawer_link__newer")
        if p.applied_drawer_link.older.valid_to is None
        and p.applied_drawer_link.newer.valid_to is None
    )
    later = decisions.decide(item=f"d{link.pk}", action="merge", actor=curator)
    with pytest.raises(DomainError) as refused:
        sweep_services.reverse(applied, actor=curator)
    details = refused.value.details
    assert refused.value.code == "revert_blocked"
    assert details["depends_on_this"] == [later.pk]
    blocked = AuditEntry.objects.get(pk=details["decision"])
    assert blocked.data["evidence"]["proposal"] == details["proposal"]
    assert refused.value.message.startswith(
        f"Proposal {details['proposal']} of this sweep (its merge, decision {blocked.pk}): "
    )
