"""The curators' console: thin views over `review.selectors` and `review.services`.

Every page works without JavaScript (plain links and forms). With htmx, the queue's results and an
item's panel are swapped in place: a view renders the partial when `request.htmx` is set.
"""

from __future__ import annotations

import csv
import json
import uuid
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import (
    HttpResponseClientRedirect,
    HttpResponseClientRefresh,
    HttpResponseLocation,
)

from dedup.errors import DomainError, InvalidInput
from palace.models import AuditEntry
from review import charts, selectors, services, sweeps
from review.curators import DECIDE_PERMISSION
from review.forms import RECENT_RUNS, AuditFilterForm, QueueFilterForm, queue_filters
from review.models import Proposal, SweepRun
from review.services import ItemRef
from review.tasks import run_sweep

AUDIT_PAGE = 50


def _can_decide(request: HttpRequest) -> None:
    if not request.user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Deciding needs the curators' decide permission.")


def _filters(form: QueueFilterForm) -> tuple[selectors.QueueFilters, str | None]:
    """The form's filters, or the defaults and the first error."""
    try:
        return form.filters(), None
    except DomainError as error:
        return selectors.QueueFilters(), error.message


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    form = QueueFilterForm(request.GET)
    filters, error = _filters(form)
    try:
        page = selectors.queue_page(filters, cursor=request.GET.get("cursor"))
    except DomainError as failure:
        error, page = failure.message, selectors.queue_page(filters)
    form.offer_runs(SweepRun.objects.filter(status="done").order_by("-pk")[:RECENT_RUNS])
    context = {
        "form": form,
        "filters": filters,
        "page": page,
        "counts": selectors.queue_counts(filters, request.user),
        "error": error,
        "query": _query_without(request, "cursor"),
        "actions": [a.value for a in services.Action],
    }
    template = "review/_queue_results.html" if request.htmx else "review/queue.html"
    return render(request, template, context, status=400 if error else 200)


def _query_without(request: HttpRequest, *names: str) -> str:
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()


def _item_context(request: HttpRequest, ref: ItemRef) -> dict:
    detail = selectors.item_detail(ref)
    if detail is None:
        raise Http404("No such review item.")
    filters, _ = _filters(QueueFilterForm(request.GET))
    context = {
        "item": detail,
        "ref": ref,
        "query": request.GET.urlencode() or request.POST.get("query", ""),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
        "next_ref": selectors.next_item(filters, detail.link),
        "open": getattr(detail.link, "status", "") == "open",
    }
    if ref.is_proposal:
        return context | _proposal_context(detail)
    if ref.is_drawer:
        return context | _drawer_link_context(detail)
    return context | _entity_link_context(detail, ref)


def _proposal_context(detail: selectors.ProposalItem) -> dict:
    link = detail.link
    return {
        "open": not link.verdict and link.status == "proposed",
        "sides": [
            {"label": "older", "segments": detail.left},
            {"label": "newer", "segments": detail.right},
        ],
        "evidence": json.dumps({"score": link.score, "gates": link.gates}),
    }


def _drawer_link_context(detail: selectors.DrawerItem) -> dict:
    link = detail.link
    sides = [
        {
            "label": label,
            "drawer": drawer,
            "segments": segments,
            "mentions": detail.mentions[drawer.pk],
            "links": [(ItemRef.of(other), other) for other in detail.other_links[drawer.pk]],
        }
        for label, drawer, segments in (
            ("older", link.older, detail.left),
            ("newer", link.newer, detail.right),
        )
    ]
    evidence = {"signals": link.signals, "similarity": link.similarity}
    return {"sides": sides, "evidence": json.dumps(evidence)}


def _entity_link_context(detail: selectors.EntityItem, ref: ItemRef) -> dict:
    link = detail.link
    sides = [
        {
            "label": label,
            "entity": entity,
            "samples": detail.samples[entity.pk],
            "candidates": [(ItemRef.of(o), o) for o in detail.other_candidates[entity.pk]],
        }
        for label, entity in (("older", link.older), ("newer", link.newer))
    ]
    evidence = {"similarity": link.similarity, "distance": detail.distance}
    context = {"sides": sides, "evidence": json.dumps(evidence)}
    if link.status == "open":
        context["settles"] = [(ItemRef.of(o), o) for o in services.aliases_would_settle(ref)]
    return context


@login_required
@require_GET
def item(request: HttpRequest, item_id: str) -> HttpResponse:
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    context = _item_context(request, ref)
    template = "review/_item.html" if request.htmx else "review/item.html"
    return render(request, template, context)


def _next_item_url(query: str) -> str:
    filters = queue_filters(QueryDict(query))
    page = selectors.queue_page(filters, size=1)
    suffix = f"?{query}" if query else ""
    if page.items:
        return reverse("review:item", args=[page.items[0].id]) + suffix
    return reverse("review:queue") + suffix


def _decide_from_form(request: HttpRequest, ref: ItemRef):
    """Decide the item as the form says, with the aliases it settles, in one transaction."""
    # What the page showed, recorded with the decision; bounded, since the client sends it.
    evidence = json.loads(request.POST.get("evidence", "{}")[:10_000] or "{}")
    also = request.POST.getlist("also_dismiss")
    batch = uuid.uuid4() if also else None
    with transaction.atomic():
        entry = services.decide(
            item=ref,
            action=request.POST.get("action", ""),
            actor=request.user,
            canonical=request.POST.get("canonical") or None,
            note=request.POST.get("note", ""),
            evidence=evidence if isinstance(evidence, dict) else {},
            batch=batch,
        )
        for other in also if entry.action == "review.add_alias" else []:
            services.decide(
                item=other,
                action="dismiss",
                actor=request.user,
                note=f"settled by the alias decided on {ref}",
                batch=batch,
            )
    return entry


def _refused(request: HttpRequest, item_id: str, error: Exception) -> HttpResponse:
    """The decision was refused: the item again with the reason (or the reason alone if the
    item is gone, its link deleted by a decision)."""
    message = getattr(error, "message", "The evidence sent with the form is not valid JSON.")
    status = getattr(error, "status", 400)
    query = request.POST.get("query", "")
    if not request.htmx:
        messages.error(request, message)
        return redirect(reverse("review:item", args=[item_id]) + (f"?{query}" if query else ""))
    try:
        context = _item_context(request, ItemRef.parse(item_id))
    except (Http404, DomainError):
        context = {"error": message, "query": query}
        return render(request, "review/_gone.html", context, status=status)
    return render(request, "review/_item.html", context | {"error": message}, status=status)


def _to_next_item(request: HttpRequest) -> HttpResponse:
    next_url = _next_item_url(request.POST.get("query", ""))
    if not request.htmx:
        return redirect(next_url)
    if urlsplit(next_url).path == reverse("review:queue"):
        return HttpResponseClientRedirect(next_url)  # the queue is a full page
    return HttpResponseLocation(next_url, target="#main")


@login_required
@require_POST
def decide(request: HttpRequest, item_id: str) -> HttpResponse:
    _can_decide(request)
    try:
        ref = ItemRef.parse(item_id)
        entry = _decide_from_form(request, ref)
    except (DomainError, json.JSONDecodeError) as error:
        return _refused(request, item_id, error)
    done = f"{entry.action.removeprefix(services.DECISION_PREFIX).replace('_', ' ')} on {ref}"
    messages.success(request, f"Done: {done}. Press u to undo.")
    return _to_next_item(request)


@login_required
@require_POST
def decide_many(request: HttpRequest) -> HttpResponse:
    _can_decide(request)
    back = redirect(_safe_next(request, reverse("review:queue")))
    items = request.POST.getlist("items")
    if request.POST.get("all_matching") == "1":
        try:
            items = _all_matching(QueryDict(request.POST.get("filter", "")))
        except DomainError as error:
            messages.error(request, error.message)
            return back
    if not items:
        messages.error(request, "Select at least one item.")
        return back
    result = services.decide_many(
        items=items,
        action=request.POST.get("action", ""),
        actor=request.user,
        note=request.POST.get("note", ""),
    )
    if result.decided:
        messages.success(request, f"{len(result.decided)} item(s) decided in batch {result.batch}.")
    for item_id, why in result.refused.items():
        messages.error(request, f"{item_id}: {why}")
    return back


def _all_matching(params: QueryDict) -> list[str]:
    """Every item the filter matches, up to the bulk limit."""
    refs = selectors.queue_refs(queue_filters(params), limit=selectors.MAX_BULK + 1)
    if len(refs) > selectors.MAX_BULK:
        raise InvalidInput(f"More than {selectors.MAX_BULK} items match: narrow the filter.")
    return [str(ref) for ref in refs]


def _safe_next(request: HttpRequest, default: str) -> str:
    target = request.POST.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return default


@login_required
@require_POST
def undo(request: HttpRequest) -> HttpResponse:
    _can_decide(request)
    entry = services.last_own_decision(request.user)
    if entry is None:
        messages.info(request, "Nothing of yours to undo.")
        return redirect(_safe_next(request, reverse("review:queue")))
    return _revert(request, entry.pk, redirect_to=reverse("review:item", args=[entry.data["item"]]))


@login_required
@require_POST
def revert(request: HttpRequest, decision_id: int) -> HttpResponse:
    _can_decide(request)
    return _revert(request, decision_id, redirect_to=_safe_next(request, reverse("review:audit")))


def _revert(request: HttpRequest, decision_id: int, *, redirect_to: str) -> HttpResponse:
    cascade = request.POST.get("cascade") == "1"
    try:
        entries = services.revert(
            decision=decision_id,
            actor=request.user,
            cascade=cascade,
            note=request.POST.get("note", ""),
        )
    except services.RevertBlocked as error:
        depends = error.details.get("depends_on_this", [])
        if depends:
            return render(
                request,
                "review/revert_confirm.html",
                {"decision_id": decision_id, "depends": depends, "next": redirect_to},
                status=409,
            )
        messages.error(request, error.message)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        reverted = ", ".join(f"#{e.data['reverts']}" for e in entries)
        messages.success(request, f"Reverted decision {reverted}.")
    return redirect(redirect_to)


@login_required
@require_GET
def audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    filters = form.filters()
    try:
        entries, error = selectors.audit_entries(filters), None
    except DomainError as failure:
        entries, error = selectors.audit_entries(selectors.AuditFilters()), failure.message
    export = request.GET.get("format")
    if export in ("csv", "json"):
        return _export(entries, export)
    page, more_before = _audit_page(entries, before=request.GET.get("before", "0"))
    context = {
        "form": form,
        "entries": page,
        "reverted": selectors.reverted_ids(page),
        "filters": filters,
        "error": error,
        "more_before": more_before,
        "query": _query_without(request, "before", "format"),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
    }
    template = "review/_audit_rows.html" if request.htmx else "review/audit.html"
    return render(request, template, context, status=400 if error else 200)


def _audit_page(entries: QuerySet[AuditEntry], *, before: str) -> tuple[list, int | None]:
    """One page of entries older than `before` (if a number), and where the next one starts."""
    try:
        start = int(before)
    except ValueError:
        start = 0
    if start:
        entries = entries.filter(pk__lt=start)
    rows = list(entries[: AUDIT_PAGE + 1])
    page = rows[:AUDIT_PAGE]
    return page, (page[-1].pk if len(rows) > AUDIT_PAGE else None)


EXPORT_FIELDS = (
    "id",
    "created_at",
    "actor",
    "action",
    "target_type",
    "target_id",
    "batch",
    "before",
    "after",
    "data",
)


def _export(entries, kind: str) -> HttpResponse:
    def row(entry) -> dict:
        return {
            "id": entry.pk,
            "created_at": entry.created_at.isoformat(),
            "actor": entry.actor_label,
            "action": entry.action,
            "target_type": entry.target_type,
            "target_id": entry.target_id,
            "batch": str(entry.batch) if entry.batch else "",
            "before": entry.before,
            "after": entry.after,
            "data": entry.data,
        }

    rows = (row(e) for e in entries.iterator(chunk_size=500))
    if kind == "json":
        response = JsonResponse(list(rows), safe=False)
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.DictWriter(response, fieldnames=EXPORT_FIELDS)
        writer.writeheader()
        for item in rows:
            writer.writerow(
                {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in item.items()}
            )
    response["Content-Disposition"] = f'attachment; filename="castellan-audit.{kind}"'
    return response


@login_required
@require_GET
def stats(request: HttpRequest) -> HttpResponse:
    numbers = selectors.precision_stats()
    return render(
        request,
        "review/stats.html",
        {
            "stats": numbers,
            "precision_chart": charts.precision_bars(numbers["tiers"]),
            "queue_chart": charts.queue_line(numbers["queue"]),
        },
    )


# --- sweeps ------------------------------------------------------------------------------------


@login_required
def sweep_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        _can_decide(request)
        return _sweep_start(request)
    runs = SweepRun.objects.order_by("-pk")[:50]
    return render(
        request,
        "review/sweeps.html",
        {"runs": runs, "can_decide": request.user.has_perm(DECIDE_PERMISSION)},
    )


def _sweep_start(request: HttpRequest) -> HttpResponse:
    try:
        threshold = float(request.POST.get("threshold") or 0.9)
        run = sweeps.start(
            wing=request.POST.get("wing", "").strip(),
            room=request.POST.get("room", "").strip(),
            threshold=threshold,
            same_kind=request.POST.get("any_kind") != "1",
            entities=request.POST.get("entities") == "1",
            actor=request.user,
        )
    except (DomainError, ValueError) as error:
        messages.error(request, getattr(error, "message", "threshold must be a number."))
        return redirect("review:sweeps")
    run_sweep.enqueue(run.pk)
    messages.success(request, f"Sweep {run.pk} queued: `manage.py db_worker` runs it.")
    return redirect("review:sweep", run_id=run.pk)


@login_required
def sweep_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = SweepRun.objects.filter(pk=run_id).first()
    if run is None:
        raise Http404("No such sweep.")
    if request.method == "POST":
        _can_decide(request)
        _sweep_act(request, run)
        return redirect("review:sweep", run_id=run.pk)
    if request.htmx and run.status in (SweepRun.Status.DONE, SweepRun.Status.FAILED):
        return HttpResponseClientRefresh()  # the summary and proposals are now to show
    tier = request.GET.get("tier", "")
    context = {
        "run": run,
        "summary": sweeps.summary(run) if run.status == "done" else None,
        "precision": sweeps.precision(run),
        "sample": run.proposals.filter(sampled=True, verdict="").order_by("tier", "score")[:20],
        "proposals": sweeps.proposals_for(run, tier=tier)[:100],
        "tier": tier,
        "tiers": sweeps.ENTITY_TIERS if run.entities else sweeps.DRAWER_TIERS,
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
    }
    template = "review/_sweep_status.html" if request.htmx else "review/sweep.html"
    return render(request, template, context)


def _sweep_act(request: HttpRequest, run: SweepRun) -> None:
    """One of a sweep page's buttons: its outcome, or why it was refused, as a message."""
    action = request.POST.get("action", "")
    handler = SWEEP_ACTIONS.get(action)
    if handler is None:
        messages.error(request, "Unknown action.")
        return
    try:
        handler(request, run, action)
    except (DomainError, ValueError, Proposal.DoesNotExist) as error:
        messages.error(request, getattr(error, "message", "That request was not understood."))


def _sweep_sample(request: HttpRequest, run: SweepRun, action: str) -> None:
    per_stratum = int(request.POST.get("per_stratum") or 5)
    marked = sweeps.draw_sample(run, per_stratum=per_stratum, actor=request.user)
    messages.success(request, f"{marked} proposal(s) drawn for review.")


def _sweep_judge(request: HttpRequest, run: SweepRun, action: str) -> None:
    proposal = run.proposals.get(pk=int(request.POST.get("proposal", "0")))
    sweeps.judge(proposal, verdict=action, actor=request.user)


def _sweep_apply(request: HttpRequest, run: SweepRun, action: str) -> None:
    done = sweeps.apply(
        run,
        threshold=float(request.POST.get("threshold") or 1.0),
        tiers=request.POST.getlist("tiers") or None,
        merge_tiers=sweeps.MERGE_TIERS if request.POST.get("merge") == "1" else (),
        discard_below=request.POST.get("discard_below") == "1",
        actor=request.user,
    )
    messages.success(
        request,
        f"Applied: {done.linked} linked, {done.merged} merged, "
        f"{done.discarded} discarded (batch {done.batch}).",
    )


def _sweep_reverse(request: HttpRequest, run: SweepRun, action: str) -> None:
    messages.success(request, f"Reversed: {sweeps.reverse(run, actor=request.user)} undone.")


SWEEP_ACTIONS = {
    "sample": _sweep_sample,
    "same": _sweep_judge,
    "wrong": _sweep_judge,
    "apply": _sweep_apply,
    "reverse": _sweep_reverse,
}
