"""One review item with its evidence, and deciding it."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_htmx.http import (
    HttpResponseClientRedirect,
    HttpResponseLocation,
)

from dedup.errors import DomainError
from palace.models import AuditEntry
from review import selectors, services
from review.curators import DECIDE_PERMISSION
from review.forms import QueueFilterForm
from review.items import done_words
from review.selectors import holds as hold_selectors
from review.selectors.gone import gone_item
from review.services import ItemRef
from review.services import holds as hold_services
from review.views.common import (
    HtmxHttpRequest,
    filters_or_defaults,
    post_or_show,
    require_decide,
    wants_partial,
)
from review.views.holds import hold_context
from review.views.offers import offer


def _item_context(
    request: HtmxHttpRequest,
    ref: ItemRef,
    params: QueryDict | None = None,
    *,
    upcoming: list[ItemRef] | None = None,
) -> dict:
    """An item's page; `params` (default: the request's own) hold the queue filter it is in. The
    curator looking at an open item takes (or renews) its hold. `upcoming`, when the caller has
    read them already, are the untaken items after this one (the first is its "next")."""
    detail = selectors.item_detail(ref)
    if detail is None:
        raise Http404("No such review item.")
    params = request.GET if params is None else params
    filters, _ = filters_or_defaults(QueueFilterForm(params))
    is_open = _is_open(ref, detail)
    context: dict[str, Any] = {
        "item": detail,
        "ref": ref,
        "query": params.urlencode() or request.POST.get("query", ""),
        "can_decide": request.user.has_perm(DECIDE_PERMISSION),
        # The next item nobody else holds (item holds: `review.services.holds`). A decided item
        # has left the queue, so its next one is the queue's first: its place in the queue's
        # order (say, the last) would offer none, or skip the open items before it.
        "next_ref": next(iter(upcoming), None)
        if upcoming is not None
        else hold_selectors.next_untaken(
            filters, request.user, after=detail.link if is_open else None
        ),
        "open": is_open,
        "renew_seconds": hold_services.HOLD_RENEW_SECONDS,
    }
    context |= hold_context(request, ref, open_item=is_open)
    # The detail is of the ref's kind.
    if ref.is_proposal:
        return context | _proposal_context(cast(selectors.ProposalItem, detail))
    if ref.is_drawer:
        return context | _drawer_link_context(cast(selectors.DrawerItem, detail))
    return context | _entity_link_context(cast(selectors.EntityItem, detail), ref)


def _is_open(ref: ItemRef, detail: Any) -> bool:
    """Still to decide: an open link, or a proposal proposed and not judged yet (held by the
    curator looking at it, like any open item)."""
    link = detail.link
    if ref.is_proposal:
        return not link.verdict and link.status == "proposed"
    return getattr(link, "status", "") == "open"


def _proposal_context(detail: selectors.ProposalItem) -> dict:
    return {
        "sides": [
            {"label": "older", "segments": detail.left},
            {"label": "newer", "segments": detail.right},
        ],
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
    # A merge needs both drawers current (the service refuses it otherwise): not offered then.
    superseded = [d for d in (link.older, link.newer) if d.valid_to is not None]
    return {"sides": sides, "unmergeable": superseded}


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
    context: dict[str, Any] = {"sides": sides}
    if link.status == "open":
        context["settles"] = [(ItemRef.of(o), o) for o in services.aliases_would_settle(ref)]
    return context


@login_required
@require_GET
@never_cache  # Back refetches it, so a decided item never shows live buttons from a cache
def item(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    """An item's page. A GET that writes, on purpose: a curator opening an open item takes (or
    renews) its advisory hold (`hold_context`; README, "Two curators, no collisions"), one row
    upserted, so two curators do not work on one item; the page's renewal is a POST."""
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    try:
        context = _item_context(request, ref)
    except Http404:  # no such link (any more)
        return _gone(request, ref)
    template = "review/_item.html" if wants_partial(request) else "review/item.html"
    return render(request, template, context)


def _gone(request: HtmxHttpRequest, ref: ItemRef) -> HttpResponse:
    """What became of an item whose link is gone (from the audit log), or a 404 if it never
    existed."""
    gone = gone_item(ref)
    if gone is None:
        raise Http404("No such review item.")
    template = "review/_item_gone.html" if wants_partial(request) else "review/item_gone.html"
    return render(request, template, {"gone": gone, "query": request.GET.urlencode()})


def _next_items(request: HttpRequest, query: str) -> tuple[str, list[ItemRef]]:
    """The URL of the first open item of the curator's filter that no other curator holds (or of
    the queue, when none is left), and that item with the one after it (its page's "next"), read
    in one queue read."""
    # The item page carried the filter as it came (a stale bookmark may hold a bad value): the
    # decision is made by now, so a bad filter falls back to the defaults, as the page did.
    filters, _ = filters_or_defaults(QueueFilterForm(QueryDict(query)))
    refs = hold_selectors.untaken(filters, request.user, count=2)  # passes items others hold
    suffix = f"?{query}" if query else ""
    if refs:
        return reverse("review:item", args=[refs[0]]) + suffix, refs
    return reverse("review:queue") + suffix, refs


def _decide_from_form(request: HttpRequest, ref: ItemRef) -> AuditEntry:
    """Decide the item as the form says, with the pairs its alias settles
    (`decide_settling`), and let go of the curator's hold on it, in one transaction (one
    commit)."""
    with transaction.atomic():
        entry = services.decide_settling(
            item=ref,
            action=request.POST.get("action", ""),
            actor=request.user,
            also_dismiss=request.POST.getlist("also_dismiss"),
            canonical=request.POST.get("canonical") or None,
            note=request.POST.get("note", ""),
            evidence={"via": "console"},  # the link's own evidence is read by the service
        )
        hold_services.hold_release(item=ref, curator=request.user)  # type: ignore[arg-type]
    return entry


def _refused(request: HtmxHttpRequest, item_id: str, error: Exception) -> HttpResponse:
    """The decision was refused: the item again with the reason (or the reason alone if the
    item is gone, its link deleted by a decision)."""
    message = getattr(error, "message", "That request was not understood.")
    status = getattr(error, "status", 400)
    query = request.POST.get("query", "")
    if not request.htmx:
        messages.error(request, message)
        return redirect(reverse("review:item", args=[item_id]) + (f"?{query}" if query else ""))
    try:
        context = _item_context(request, ItemRef.parse(item_id), QueryDict(query))
    except (Http404, DomainError):
        context = {"error": message, "query": query}
        return render(request, "review/_gone.html", context, status=status)
    return render(request, "review/_item.html", context | {"error": message}, status=status)


def _to_next_item(request: HtmxHttpRequest) -> HttpResponse:
    query = request.POST.get("query", "")
    next_url, refs = _next_items(request, query)
    if not request.htmx:
        return redirect(next_url)
    if not refs:
        return HttpResponseClientRedirect(next_url)  # the queue is a full page
    # The next item comes back with the decision, swapped into the form's target (#main) under
    # its own URL: one round trip, not a redirect the browser would then follow (issue 13,
    # capability 15; bench/console.py measures it).
    try:
        context = _item_context(request, refs[0], QueryDict(query), upcoming=refs[1:])
    except Http404:  # decided and deleted since, by someone else: let the browser ask again
        return HttpResponseLocation(next_url, target="#main")
    response = render(request, "review/_item.html", context)
    response["HX-Push-Url"] = next_url
    return response


def _also_settled(entry: AuditEntry) -> str:
    """ ", and dismissed e2: the alias settled it": the pairs an alias dismissed with it, in its
    batch (`_decide_from_form`), so the message does not read as one decision of several."""
    if entry.batch is None:
        return ""
    others = list(
        AuditEntry.objects.filter(batch=entry.batch)
        .exclude(pk=entry.pk)
        .order_by("pk")
        .values_list("data__item", flat=True)
    )
    if not others:
        return ""
    return f", and dismissed {', '.join(others)}: the alias settled {pluralize(others, 'it,them')}"


def _item_url(request: HttpRequest, item_id: str) -> str:
    query = request.GET.urlencode()
    return reverse("review:item", args=[item_id]) + (f"?{query}" if query else "")


@login_required
@post_or_show(_item_url)
def decide(request: HtmxHttpRequest, item_id: str) -> HttpResponse:
    require_decide(request)
    try:
        ref = ItemRef.parse(item_id)
        entry = _decide_from_form(request, ref)
    except DomainError as error:
        return _refused(request, item_id, error)
    done = f"{done_words(entry.action)} on {ref}"
    # The Undo button beside it says how to undo (and names its key only where keys are on).
    messages.success(request, f"Done: {done}{_also_settled(entry)}.")
    offer(request, entry)
    return _to_next_item(request)
