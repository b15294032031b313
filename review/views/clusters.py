"""Clusters of linked items: one cluster with its members and evidence, deciding it at once,
and a decision batch (what it did, and reverting it as one)."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect

from dedup.errors import DomainError
from dedup.validation import id_of
from palace.models import AuditEntry
from review import selectors, services
from review.curators import DECIDE_PERMISSION
from review.services import Action, ClusterChoice, ItemRef
from review.services.clusters import ENTITY_MODES
from review.views.common import HtmxHttpRequest, post_or_show, require_decide, wants_partial

FATES = ("merge", "distinct", "open")


def _ref(item_id: str) -> ItemRef:
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    if ref.is_proposal:
        raise Http404("A sweep's proposal is not a cluster.")
    return ref


def _cluster_context(request: HttpRequest, ref: ItemRef, canonical: str | None) -> dict | None:
    detail = selectors.cluster_detail(ref, canonical=canonical)
    if detail is None:
        return None
    cluster = detail.cluster
    number = {view.row.pk: n for n, view in enumerate(detail.members, start=1)}
    return {
        "ref": ref,
        "detail": detail,
        "cluster": cluster,
        "number": number,
        "evidence": [
            (ItemRef(ref.kind, lk.pk), lk, number[lk.older_id], number[lk.newer_id])
            for lk in detail.links
        ],
        "link_ids": ",".join(map(str, cluster.link_ids)),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
        "max_members": selectors.MAX_MEMBERS,
        "queue_query": "type=cluster",
    }


@login_required
@require_GET
@never_cache  # Back refetches it: a cluster decided since never shows live buttons from a cache
def cluster(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    ref = _ref(item_id)
    context = _cluster_context(request, ref, request.GET.get("canonical"))
    if context is None:
        gone = "review/_cluster_gone.html" if wants_partial(request) else "review/cluster_gone.html"
        return render(request, gone, {"ref": ref}, status=404)
    if context["cluster"].ref != ref:  # any link of the cluster reaches it, under one name
        return redirect(reverse("review:cluster", args=[context["cluster"].id]))
    template = "review/_cluster.html" if wants_partial(request) else "review/cluster.html"
    return render(request, template, context)


def _choice(request: HttpRequest, members: list[str]) -> ClusterChoice:
    """The curator's choice from the form: the canonical member, and a fate per member."""
    canonical = request.POST.get("canonical", "")
    fates = {uuid_: request.POST.get(f"fate-{uuid_}", "open") for uuid_ in members}
    raw = request.POST.get("links", "").split(",")
    shown = {pk for pk in map(id_of, raw) if pk is not None}  # "²" or 30 digits: ignored
    mode = request.POST.get("mode", "")
    return ClusterChoice(
        canonical=canonical,
        merge=frozenset(u for u, fate in fates.items() if fate == "merge" and u != canonical),
        distinct=frozenset(u for u, fate in fates.items() if fate == "distinct" and u != canonical),
        shown_links=frozenset(shown),
        mode=Action(mode) if mode in ENTITY_MODES else Action.ADD_ALIAS,
    )


@login_required
@post_or_show(lambda request, item_id: reverse("review:cluster", args=[item_id]))
def cluster_decide(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    require_decide(request)
    ref = _ref(item_id)
    members = request.POST.getlist("members")
    try:
        result = services.decide_cluster(
            cluster=ref,
            choice=_choice(request, members),
            actor=request.user,
            note=request.POST.get("note", ""),
        )
    except DomainError as error:
        return _refused(request, ref, error)
    messages.success(
        request,
        f"Done: cluster {result.cluster}, {result.merged} merged into the canonical member, "
        f"{result.distinct} marked distinct ({len(result.decided)} "
        f"link{pluralize(result.decided)} decided in one batch).",
    )
    target = reverse("review:batch", args=[result.batch])
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _refused(request: HtmxHttpRequest, ref: ItemRef, error: DomainError) -> HttpResponse:
    """The decision was refused: the cluster again with the reason, in place (a fragment for
    #main), or what became of it when no open cluster holds it any more."""
    status = error.status
    if not request.htmx:
        messages.error(request, error.message)
        return redirect(reverse("review:cluster", args=[ref]))
    context = _cluster_context(request, ref, request.POST.get("canonical"))
    if context is None:
        gone = {"ref": ref, "error": error.message}
        return render(request, "review/_cluster_gone.html", gone, status=status)
    return render(
        request, "review/_cluster.html", context | {"error": error.message}, status=status
    )


@login_required
@require_GET
@never_cache  # Back after a revert shows it reverted
def batch(request: HttpRequest, batch_id: uuid.UUID) -> HttpResponse:
    """What one batch decided, and reverting it as one."""
    entries = list(AuditEntry.objects.filter(batch=batch_id).order_by("pk"))
    if not entries:
        raise Http404("No decision in that batch.")
    reverted = selectors.reverted_ids(entries)
    decisions = [e for e in entries if e.action != services.REVERT_ACTION]
    context = {
        "batch": batch_id,
        "entries": entries,
        "open_decisions": [e for e in decisions if e.pk not in reverted],
        "reverted": reverted,
        "cluster": next((e.data["cluster"] for e in decisions if e.data.get("cluster")), None),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
    }
    return render(request, "review/batch.html", context)
