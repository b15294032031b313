"""Wide actions show their reach and are confirmed first (issue 13, defect 4).

"Every item of this filter", sweep Apply and sweep Reverse each act on many items at once. A POST
of one of them without its confirmation does nothing but render a confirm page: the reach (N items,
by kind or by action) and a form that posts the same fields again with the confirmation. It is a
page, not a script dialog, so it works without JavaScript.

For a bulk decision the confirmation is a signed digest of the action and the exact items shown: if
the filter matches other items by the time it is confirmed (new links arrived, another curator
decided some), the page is shown again with the new reach rather than deciding what was not seen.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter

from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from dedup.policy.merge_gates import DRAWER_TIERS, ENTITY_TIERS, MERGE_TIERS
from review.items import ItemKind, ItemRef
from review.models import SweepRun
from review.selectors import sweeps as sweep_selectors
from review.selectors.gates import held_back_of
from review.views import sweep_pages
from review.views.common import safe_next

BULK_SALT = "review.bulk-confirm"
KIND_LABELS = {
    ItemKind.DRAWER: "drawer links",
    ItemKind.ENTITY: "entity pairs",
    ItemKind.PROPOSAL: "sweep proposals",
}
VERBS = {
    "dismiss": "Dismiss",
    "delete_link": "Delete the link of",
    "merge": "Merge",
    "add_alias": "Add an alias for",
    "same": "Judge the same",
    "wrong": "Judge not the same",
}


def _digest(action: str, items: list[str]) -> str:
    return hashlib.sha256("\n".join([action, *sorted(items)]).encode()).hexdigest()


def bulk_confirmation(
    request: HttpRequest, *, action: str, items: list[str]
) -> HttpResponse | None:
    """None when the curator confirmed exactly this reach; otherwise the confirm page."""
    digest = _digest(action, items)
    token = request.POST.get("confirm", "")
    try:
        confirmed = bool(token) and signing.loads(token, salt=BULK_SALT) == digest
    except signing.BadSignature:
        confirmed = False
    if confirmed:
        return None
    kinds = Counter(ItemRef.parse(item).kind for item in items)
    held = Counter(held_back_of(items, action).values())  # left open, by why
    context = {
        "verb": VERBS.get(action, action),
        "count": len(items),
        "reach": [(count, KIND_LABELS[kind]) for kind, count in kinds.items()],
        "held_back": sorted(held.items(), key=lambda pair: -pair[1]),
        "held_count": held.total(),
        "decidable": len(items) - held.total(),
        "changed": bool(token),
        "token": signing.dumps(digest, salt=BULK_SALT),
        "fields": {
            name: request.POST.get(name, "") for name in ("action", "filter", "note", "next")
        },
        "cancel": safe_next(request, reverse("review:queue")),  # never an off-site or script URL
    }
    return render(request, "review/bulk_confirm.html", context)


def sweep_confirmation(request: HttpRequest, run: SweepRun) -> HttpResponse | None:
    """For Apply or Reverse without `confirm=1`: the confirm page with its reach. None for any
    other action, or once confirmed. Options the page cannot read are left to the action,
    which refuses them with its own message."""
    action = request.POST.get("action", "")
    if action not in ("apply", "reverse") or request.POST.get("confirm") == "1":
        return None
    context: dict = {"run": run, "action": action, "posted": _posted(request)}
    if action == "reverse":
        context["reach"] = sweep_selectors.reverse_reach(run)
        context["nothing_applied"] = not sweep_pages.is_applied(run)  # no button: nothing to do
        return render(request, "review/sweep_confirm.html", context)
    try:
        threshold = float(request.POST.get("threshold") or 1.0)
    except ValueError:
        return None
    if not math.isfinite(threshold):  # "nan", "inf": refused by the apply itself, with its message
        return None
    tiers = request.POST.getlist("tiers") or (ENTITY_TIERS if run.entities else DRAWER_TIERS)
    context["threshold"] = threshold
    context["reach"] = sweep_selectors.apply_reach(
        run,
        threshold=threshold,
        tiers=tiers,
        merge_tiers=MERGE_TIERS if request.POST.get("merge") == "1" else (),
        discard_below=request.POST.get("discard_below") == "1",
    )
    return render(request, "review/sweep_confirm.html", context)


def _posted(request: HttpRequest) -> list[tuple[str, str]]:
    """The form's fields, to post again with the confirmation."""
    return [
        (name, value)
        for name, values in request.POST.lists()
        if name not in ("csrfmiddlewaretoken", "confirm")
        for value in values
    ]
