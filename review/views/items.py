"""One review item with its evidence, and deciding it."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import (
    HttpResponseClientRedirect,
    HttpResponseLocation,
)

from dedup.errors import DomainError
from review import selectors, services
from review.curators import DECIDE_PERMISSION
from review.forms import QueueFilterForm, queue_filters
from review.services import ItemRef
from review.views.common import HtmxHttpRequest, filters_or_defaults, require_decide

_LOOK_UP = object()


def _item_context(
    request: HtmxHttpRequest,
    ref: ItemRef,
    params: QueryDict | None = None,
    next_ref: ItemRef | object | None = _LOOK_UP,
) -> dict:
    """An item's page; `params` (default: the request's own) hold the queue filter it is in,
    and `next_ref` the item after it, when the caller read it already."""
    detail = selectors.item_detail(ref)
    if detail is None:
        raise Http404("No such review item.")
    params = request.GET if params is None else params
    if next_ref is _LOOK_UP:
        filters, _ = filters_or_defaults(QueueFilterForm(params))
        next_ref = selectors.next_item(filters, detail.link)
    context = {
        "item": detail,
        "ref": ref,
        "query": params.urlencode() or request.POST.get("query", ""),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
        "next_ref": next_ref,
        "open": getattr(detail.link, "status", "") == "open",
    }
    # The detail is of the ref's kind.
    if ref.is_proposal:
        return context | _proposal_context(cast(selectors.ProposalItem, detail))
    if ref.is_drawer:
        return context | _drawer_link_context(cast(selectors.DrawerItem, detail))
    return context | _entity_link_context(cast(selectors.EntityItem, detail), ref)


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
    context: dict[str, Any] = {"sides": sides, "evidence": json.dumps(evidence)}
    if link.status == "open":
        context["settles"] = [(ItemRef.of(o), o) for o in services.aliases_would_settle(ref)]
    return context


@login_required
@require_GET
def item(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    context = _item_context(request, ref)
    template = "review/_item.html" if request.htmx else "review/item.html"
    return render(request, template, context)


def _next_items(query: str) -> tuple[str, list[ItemRef]]:
    """The URL of the first open item of the curator's filter (or of the queue, when none is
    left), and that item and the one after it (read together: the page links to it)."""
    filters = queue_filters(QueryDict(query))
    refs = [item.ref for item in selectors.queue_page(filters, size=2).items]
    suffix = f"?{query}" if query else ""
    if refs:
        return reverse("review:item", args=[refs[0]]) + suffix, refs
    return reverse("review:queue") + suffix, refs


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


def _refused(request: HtmxHttpRequest, item_id: str, error: Exception) -> HttpResponse:
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


def _to_next_item(request: HtmxHttpRequest) -> HttpResponse:
    query = request.POST.get("query", "")
    next_url, refs = _next_items(query)
    if not request.htmx:
        return redirect(next_url)
    if not refs:
        return HttpResponseClientRedirect(next_url)  # the queue is a full page
    # The next item comes back with the decision, swapped into the form's target (#main) under
    # its own URL: one round trip, not a redirect the browser would then follow (issue 13,
    # capability 15; bench/console.py measures it).
    try:
        context = _item_context(request, refs[0], QueryDict(query), [*refs, None][1])
    except Http404:  # decided and deleted since, by someone else: let the browser ask again
        return HttpResponseLocation(next_url, target="#main")
    response = render(request, "review/_item.html", context)
    response["HX-Push-Url"] = next_url
    return response


@login_required
@require_POST
def decide(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    require_decide(request)
    try:
        ref = ItemRef.parse(item_id)
        entry = _decide_from_form(request, ref)
    except (DomainError, json.JSONDecodeError) as error:
        return _refused(request, item_id, error)
    done = f"{entry.action.removeprefix(services.DECISION_PREFIX).replace('_', ' ')} on {ref}"
    messages.success(request, f"Done: {done}. Press u to undo.")
    return _to_next_item(request)
