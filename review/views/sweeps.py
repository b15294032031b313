"""Consolidation sweeps: starting one, following it, sampling, applying and reversing it."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django_htmx.http import (
    HttpResponseClientRefresh,
)

from dedup.errors import DomainError
from dedup.policy.merge_gates import DRAWER_TIERS, ENTITY_TIERS, MERGE_TIERS
from dedup.validation import id_of
from review.curators import DECIDE_PERMISSION
from review.models import Proposal, SweepRun
from review.selectors import sweeps as sweep_selectors
from review.selectors.queue import proposal_changes
from review.services import sweep_jobs
from review.services import sweeps as sweep_services
from review.tasks import run_sweep, run_sweep_job
from review.views import sweep_pages
from review.views.common import HtmxHttpRequest, require_decide
from review.views.confirm import sweep_confirmation


@login_required
def sweep_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        require_decide(request)
        return _sweep_start(request)
    return _sweep_list_page(request)


def _sweep_list_page(request: HttpRequest, entered: Any = None, status: int = 200) -> HttpResponse:
    """The runs, and the form to start one (holding what was `entered`, when it was refused)."""
    runs = SweepRun.objects.order_by("-pk")[:50]
    context = {
        "runs": runs,
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
        "entered": entered or {},
    }
    return render(request, "review/sweeps.html", context, status=status)


def _sweep_start(request: HttpRequest) -> HttpResponse:
    try:
        threshold = float(request.POST.get("threshold") or 0.9)
        run = sweep_services.start(
            wing=request.POST.get("wing", "").strip(),
            room=request.POST.get("room", "").strip(),
            threshold=threshold,
            same_kind=request.POST.get("any_kind") != "1",
            entities=request.POST.get("entities") == "1",
            actor=request.user,
        )
    except (DomainError, ValueError) as error:
        messages.error(request, getattr(error, "message", "threshold must be a number."))
        under_way = getattr(error, "details", {}).get("run")  # started twice: show the first
        if under_way:
            return redirect("review:sweep", run_id=under_way)
        return _sweep_list_page(request, entered=request.POST, status=400)  # as typed
    run_sweep.enqueue(run.pk)
    messages.success(request, f"Sweep {run.pk} queued: a worker (manage.py db_worker) runs it.")
    return redirect("review:sweep", run_id=run.pk)


@login_required
def sweep_detail(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    run = SweepRun.objects.filter(pk=run_id).first()
    if run is None:
        raise Http404("No such sweep.")
    if request.method == "POST":
        require_decide(request)
        confirm = sweep_confirmation(request, run)  # Apply and Reverse are confirmed first
        if confirm is not None:
            return confirm
        judged = _sweep_act(request, run)
        if judged is not None:  # back to the cards, the next one first, saying what was done
            url = reverse("review:sweep", args=[run.pk])
            return redirect(f"{url}?judged={judged}#to-judge")
        return redirect("review:sweep", run_id=run.pk)
    sweep_jobs.stopped_settled(run)  # a job whose worker stopped is shown failed
    job = sweep_selectors.latest_job(run)
    if request.htmx and not sweep_pages.under_way(run, job):
        return HttpResponseClientRefresh()  # the summary, or the job's outcome, is now to show
    tier = request.GET.get("tier", "")
    context = {
        "run": run,
        "summary": (
            sweep_selectors.summary(run, thresholds=sweep_selectors.what_if_thresholds(run))
            if run.status == "done"
            else None
        ),
        "applications": sweep_pages.applications(run),
        "job": job,
        "following": sweep_pages.under_way(run, job),
        "job_outcome": sweep_pages.job_outcome(job),
        "looks_stuck": sweep_pages.looks_stuck(run),
        "precision": sweep_selectors.precision(run),
        "sample": sweep_selectors.sample_to_judge(run),
        "judged": _judged(run, request.GET.get("judged", "")),
        "proposals": [
            (proposal, proposal_changes(proposal))
            for proposal in sweep_selectors.proposals_for(run, tier=tier)[:100]
        ],
        "tier": tier,
        "tiers": ENTITY_TIERS if run.entities else DRAWER_TIERS,
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
    }
    template = "review/_sweep_status.html" if request.htmx else "review/sweep.html"
    return render(request, template, context)


def _sweep_act(request: HttpRequest, run: SweepRun) -> int | None:
    """One of a sweep page's buttons: its outcome, or why it was refused, as a message; the
    proposal judged, for a judgement."""
    action = request.POST.get("action", "")
    handler = SWEEP_ACTIONS.get(action)
    if handler is None:
        messages.error(request, "Unknown action.")
        return None
    try:
        return handler(request, run, action)
    except (DomainError, ValueError, Proposal.DoesNotExist) as error:
        messages.error(request, getattr(error, "message", "That request was not understood."))
        return None


def _judged(run: SweepRun, named: str) -> Proposal | None:
    """The proposal the page was sent back to after judging (`?judged=`), if judged."""
    pk = id_of(named)
    return run.proposals.exclude(verdict="").filter(pk=pk).first() if pk else None


def _sweep_sample(request: HttpRequest, run: SweepRun, action: str) -> None:
    per_stratum = int(request.POST.get("per_stratum") or 5)
    marked = sweep_services.draw_sample(run, per_stratum=per_stratum, actor=request.user)
    waiting = run.proposals.filter(sampled=True, verdict="").count()
    messages.success(
        request,
        f"{marked} more proposal(s) drawn; {waiting} to judge below (a drawn proposal judged "
        "in the queue already is not shown).",
    )


def _sweep_judge(request: HttpRequest, run: SweepRun, action: str) -> int:
    proposal = run.proposals.get(pk=int(request.POST.get("proposal", "0")))
    sweep_services.judge(proposal, verdict=action, actor=request.user)
    return proposal.pk


def _sweep_apply(request: HttpRequest, run: SweepRun, action: str) -> None:
    sweep_services.apply_queue(
        run,
        threshold=float(request.POST.get("threshold") or 1.0),
        tiers=request.POST.getlist("tiers") or None,
        merge_tiers=MERGE_TIERS if request.POST.get("merge") == "1" else (),
        discard_below=request.POST.get("discard_below") == "1",
        actor=request.user,
        queue=run_sweep_job.enqueue,
    )
    messages.info(request, "Apply queued: a worker (manage.py db_worker) applies it.")


def _sweep_resume(request: HttpRequest, run: SweepRun, action: str) -> None:
    sweep_services.queue_resumed(run.pk, run_sweep.enqueue)
    messages.success(request, f"Sweep {run.pk} resumed: a worker (manage.py db_worker) runs it.")


def _sweep_reverse(request: HttpRequest, run: SweepRun, action: str) -> None:
    sweep_services.reverse_queue(run, actor=request.user, queue=run_sweep_job.enqueue)
    messages.info(request, "Reverse queued: a worker (manage.py db_worker) reverses it.")


def _sweep_cancel(request: HttpRequest, run: SweepRun, action: str) -> None:
    sweep_services.job_cancel(run, actor=request.user)
    messages.success(request, "Cancelled before a worker took it: nothing of it was done.")


SWEEP_ACTIONS = {
    "sample": _sweep_sample,
    "same": _sweep_judge,
    "wrong": _sweep_judge,
    "apply": _sweep_apply,
    "reverse": _sweep_reverse,
    "resume": _sweep_resume,
    "cancel": _sweep_cancel,
}
