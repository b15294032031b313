"""The audit log: filtering, exporting, undoing and reverting decisions."""

from __future__ import annotations

import csv
import json
import uuid
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.http import require_GET

from dedup.errors import DomainError
from dedup.validation import id_of
from palace.models import AuditEntry
from review import selectors, services
from review.curators import DECIDE_PERMISSION
from review.forms import AuditFilterForm
from review.items import done_words
from review.views import offers
from review.views.common import (
    HtmxHttpRequest,
    in_console_words,
    post_or_show,
    query_without,
    referer_path,
    require_decide,
    safe_next,
    wants_partial,
)

AUDIT_PAGE = 50


@login_required
@post_or_show(lambda request: reverse("review:queue"))
def undo(request: HttpRequest) -> HttpResponse:
    """The Undo offered after a decision (its button, or `u` while it is shown): the decision or
    batch it names, once (`review.views.offers`). Never "your last decision": a second `u`, or
    one pressed on a page with no offer, would undo decisions the curator was not shown."""
    require_decide(request)
    back = safe_next(request, referer_path(request) or reverse("review:queue"))
    batch = request.POST.get("batch", "").strip()
    named = request.POST.get("decision", "").strip()
    decision = id_of(named)
    if named and decision is None:  # a malformed number is not "none named": it names nothing
        messages.error(request, "That is not a decision's number.")
        return redirect(back)
    if not batch and decision is None:
        messages.error(
            request, "Nothing to undo: name a decision, or revert it from the audit log."
        )
        return redirect(back)
    if not offers.take_offered(request, decision=decision, batch=batch):
        messages.error(
            request,
            "That undo is not on offer (used already, or never offered here): revert the "
            "decision from the audit log.",
        )
        return redirect(back)
    if batch or decision is None:
        return _revert_batch(request, batch, redirect_to=back)
    item = AuditEntry.objects.filter(pk=decision).values_list("data__item", flat=True).first()
    to_item = reverse("review:item", args=[item]) + _queue_query(back) if item else back
    return _revert(request, decision, redirect_to=to_item)


def _queue_query(page: str) -> str:
    """The queue filter `page` carries (`?run=3`), when it is the queue or an item of it, so the
    undone item opens in the filter the curator was working through."""
    url = urlsplit(page)
    try:
        view = resolve(url.path).view_name
    except Resolver404:
        return ""
    return f"?{url.query}" if url.query and view in ("review:queue", "review:item") else ""


@login_required
@post_or_show(lambda request, batch_id: reverse("review:batch", args=[batch_id]))
def batch_revert(request: HttpRequest, batch_id: uuid.UUID) -> HttpResponse:
    """Revert a batch of decisions as one, from the audit log or the batch's page (`next` says
    where to return). When later decisions depend on it, a page offers to revert them too."""
    require_decide(request)
    back = safe_next(request, reverse("review:batch", args=[batch_id]))
    return _revert_batch(request, str(batch_id), redirect_to=back)


def _revert_batch(request: HttpRequest, batch: str, *, redirect_to: str) -> HttpResponse:
    try:
        batch_id = uuid.UUID(batch)
    except ValueError:
        messages.error(request, "That is not a batch id.")
        return redirect(redirect_to)
    try:
        entries = services.revert_batch(
            batch=batch_id,
            actor=request.user,
            cascade=request.POST.get("cascade") == "1",
            note=request.POST.get("note", ""),
        )
    except services.RevertBlocked as error:
        depends = error.details.get("depends_on_this", [])
        if depends:
            context = {"batch": batch_id, "dependents": _dependents(depends), "next": redirect_to}
            return render(request, "review/batch_confirm.html", context, status=409)
        messages.error(request, error.message)
    except DomainError as error:
        messages.error(request, error.message)
        if error.code == "decision_not_found":  # no batch page to go back to: a 404 there
            return redirect(reverse("review:audit"))  # left the message to the next page
    else:
        _report_reverted(request, entries, batch=batch_id)
    return redirect(redirect_to)


@login_required
@post_or_show(lambda request, decision_id: reverse("review:audit"))
def revert(request: HttpRequest, decision_id: int) -> HttpResponse:
    require_decide(request)
    return _revert(request, decision_id, redirect_to=safe_next(request, reverse("review:audit")))


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
                {
                    "decision_id": decision_id,
                    "dependents": _dependents(depends),
                    "next": redirect_to,
                },
                status=409,
            )
        messages.error(request, error.message)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        _report_reverted(request, entries)
    return redirect(redirect_to)


def _dependents(pks: list[int]) -> list[AuditEntry]:
    """The later decisions a revert waits on, as the confirmation page names them (one query)."""
    return list(AuditEntry.objects.filter(pk__in=pks).select_related("actor").order_by("pk"))


def _report_reverted(
    request: HttpRequest, entries: list[AuditEntry], *, batch: uuid.UUID | None = None
) -> None:
    reverted = ", ".join(f"#{e.data['reverts']}" for e in entries)
    if batch is not None:
        count = len(entries)
        messages.success(
            request,
            f"Reverted {count} decision{pluralize(count)} as one "
            f"(batch {str(batch)[:8]}): {reverted}.",
        )
    elif len(entries) > 1:
        messages.success(request, f"Reverted {len(entries)} decisions: {reverted}.")
    else:
        (entry,) = entries
        undone = AuditEntry.objects.filter(pk=entry.data["reverts"]).first()
        what = f" ({done_words(undone.action)} on {undone.data.get('item', '')})" if undone else ""
        messages.success(request, f"Reverted decision {reverted}{what}.")
    for entry in entries:
        if entry.data.get("not_restored"):
            lost = "; ".join(entry.data["not_restored"])
            messages.warning(request, f"Decision #{entry.data['reverts']}: not restored: {lost}.")
        if entry.data.get("linked"):
            count = len(entry.data["linked"])
            messages.info(
                request,
                f"Decision #{entry.data['reverts']}: the entity it redirected is linked to "
                f"{count} {'entity' if count == 1 else 'entities'} a redirect kept from it, "
                "now in the queue.",
            )


@login_required
@require_GET
def audit(request: HtmxHttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    try:
        filters = form.filters()
        entries, error = selectors.audit_entries(filters), None
    except DomainError as failure:
        # An invalid filter lists nothing and exports nothing: the whole log would pass for it.
        filters, error = selectors.AuditFilters(), in_console_words(failure.message, form)
        entries = AuditEntry.objects.none()
    export = request.GET.get("format")
    if export in ("csv", "json") and not error:
        return _export(entries, export, request.user)
    page, more_before = _audit_page(entries, before=request.GET.get("before", "0"))
    context = {
        "form": form,
        "entries": page,
        "reverted": selectors.reverted_ids(page),
        "filters": filters,
        "error": error,
        "more_before": more_before,
        "query": query_without(request, "before", "format"),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
    }
    template = "review/_audit_rows.html" if wants_partial(request) else "review/audit.html"
    return render(request, template, context, status=400 if error else 200)


def _audit_page(entries: QuerySet[AuditEntry], *, before: str) -> tuple[list, int | None]:
    """One page of entries older than `before` (if a number), and where the next one starts."""
    start = id_of(before) or 0
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


def _export(entries, kind: str, user: object) -> HttpResponse:
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

    visible = selectors.without_deleted_content(entries.iterator(chunk_size=500), user)
    rows = (row(e) for e in visible)
    if kind == "json":
        response: HttpResponse = JsonResponse(list(rows), safe=False)
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
