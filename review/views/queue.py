"""The review queue: filtered, ordered, keyset-paginated; and bulk decisions over it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from dedup.errors import DomainError, InvalidInput
from review import selectors, services
from review.forms import RECENT_RUNS, QueueFilterForm, queue_filters
from review.items import Action, InvalidAction
from review.models import SweepRun
from review.selectors import holds as hold_selectors
from review.views.common import (
    HtmxHttpRequest,
    filters_or_refusal,
    in_console_words,
    post_or_show,
    query_without,
    require_decide,
    safe_next,
    wants_partial,
)
from review.views.confirm import bulk_confirmation
from review.views.offers import offer


@login_required
@require_GET
@never_cache  # Back refetches it, so items decided since are not shown open from a cache
def queue(request: HtmxHttpRequest) -> HttpResponse:
    form = QueueFilterForm(request.GET)
    filters, refusal = filters_or_refusal(form)
    error = None if refusal is None else in_console_words(refusal.message, form)
    status = 200 if refusal is None else refusal.status  # a sweep there is not: 404
    try:
        # An invalid filter lists nothing: the unfiltered list would pass for the filtered one.
        page = (
            selectors.QueuePage([], None)
            if error
            else selectors.queue_page(filters, cursor=request.GET.get("cursor"))
        )
    except DomainError as failure:
        error, page, status = failure.message, selectors.QueuePage([], None), failure.status
    form.offer_runs(SweepRun.objects.filter(status="done").order_by("-pk")[:RECENT_RUNS])
    context = {
        "form": form,
        "filters": filters,
        "page": page,
        # An invalid filter counts nothing either: the defaults' counts would pass for its own.
        "counts": {}
        if error
        else selectors.queue_counts(
            filters, request.user, cursor=request.GET.get("cursor"), page=page
        ),
        # Items another curator holds, shown as taken (one query).
        "held": hold_selectors.holders([item.ref for item in page.items], request.user),
        "error": error,
        "query": query_without(request, "cursor"),
        "query_but_type": query_without(request, "cursor", "type"),  # "group into clusters"
        "actions": [a.value for a in services.Action],
    }
    results = "review/_queue_results.html"
    if filters.type == "cluster":  # linked groups instead of pairs (selectors.clusters)
        context["clusters"] = selectors.cluster_page(filters)
        results = "review/_cluster_results.html"
    context["results"] = results
    template = results if wants_partial(request) else "review/queue.html"
    return render(request, template, context, status=status)


@login_required
@post_or_show(lambda request: reverse("review:queue"))
def decide_many(request: HttpRequest) -> HttpResponse:
    require_decide(request)
    back = redirect(safe_next(request, reverse("review:queue")))
    items = request.POST.getlist("items")
    if request.POST.get("all_matching") == "1":
        try:
            items = _all_matching(QueryDict(request.POST.get("filter", "")))
        except DomainError as error:
            messages.error(request, error.message)
            return back
        # A wide action: its reach is shown and confirmed first.
        confirm = bulk_confirmation(request, action=request.POST.get("action", ""), items=items)
        if items and confirm is not None:
            return confirm
    if not items:
        messages.error(request, "Select at least one item.")
        return back
    try:
        result = services.decide_many(
            items=items,
            action=request.POST.get("action", ""),
            actor=request.user,
            note=request.POST.get("note", ""),
        )
    except DomainError as error:  # too many items, or the note
        messages.error(request, error.message)
        return back
    if count := len(result.decided):
        short = str(result.batch)[:8]  # the audit log and the batch page show it so
        messages.success(request, f"{count} item{pluralize(count)} decided in one batch ({short}).")
        offer(request, result.decided[0], batch_size=count)
    if result.held_back:
        messages.warning(request, _held_back_message(result.held_back))
    for item_id, refusal in result.refused.items():
        messages.error(request, f"{item_id}: {_in_console_words(refusal)}")
    return back


HELD_BACK_NAMED = 10  # items named in the message; the others are counted


def _held_back_message(held: dict[str, str]) -> str:
    """How many items a bulk merge left open, and why, each (the first HELD_BACK_NAMED)."""
    count = len(held)
    named = "; ".join(f"{item}: {reason}" for item, reason in list(held.items())[:HELD_BACK_NAMED])
    more = f"; and {count - HELD_BACK_NAMED} more" if count > HELD_BACK_NAMED else ""
    return (
        f"{count} item{pluralize(count)} left open, not decided unseen: {named}{more}. "
        "Open each to compare its texts."
    )


def _in_console_words(error: DomainError) -> str:
    """Why an item was refused; an action it does not take is worded with the buttons' labels,
    not the service's values (`'add_alias' ... merge, delete_link`)."""
    if not isinstance(error, InvalidAction):
        return error.message
    labels = {action.value: action.label for action in Action}
    asked, offered = error.details["action"], [labels[a] for a in error.details["offered"]]
    label = labels.get(asked, asked)
    choices = f"{', '.join(offered[:-1])} or {offered[-1]}"
    return f"“{label}” is not a decision for this item: choose {choices}."


def _all_matching(params: QueryDict) -> list[str]:
    """Every item the filter matches, up to the bulk limit."""
    refs = selectors.queue_refs(queue_filters(params), limit=selectors.MAX_BULK + 1)
    if len(refs) > selectors.MAX_BULK:
        raise InvalidInput(f"More than {selectors.MAX_BULK} items match: narrow the filter.")
    return [str(ref) for ref in refs]
