"""Item holds in the console: who holds the item a curator looks at, renewed while they stay."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from dedup.errors import DomainError
from review.curators import DECIDE_PERMISSION
from review.items import ItemRef
from review.selectors import holds as hold_selectors
from review.services import holds as hold_services
from review.views.common import post_or_show


def hold_context(request: HttpRequest, ref: ItemRef, *, open_item: bool = True) -> dict:
    """A curator takes (or renews) the hold on the open item they look at, unless someone else
    holds it; a reader takes none, and sees who holds it. A decided item is held by nobody."""
    if not open_item:
        return {"held_by": "", "hold": None}
    if request.user.has_perm(DECIDE_PERMISSION):
        hold = hold_services.hold_take(item=ref, curator=request.user)  # type: ignore[arg-type]
        other = hold.curator_id != request.user.pk
        return {"held_by": hold.curator.get_username() if other else "", "hold": hold}
    return {"held_by": hold_selectors.holders([ref], request.user).get(str(ref), ""), "hold": None}


@login_required
@post_or_show(lambda request, item_id: reverse("review:item", args=[item_id]))
def hold(request: HttpRequest, item_id: str) -> HttpResponse:
    """The item page's renewal (htmx, every HOLD_RENEW_SECONDS): the hold's state, again. An item
    decided since the page was shown (in another tab, by another curator) is held no more: the
    curator is told, and the renewal stops."""
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    context = {"ref": ref, "renew_seconds": hold_services.HOLD_RENEW_SECONDS}
    if not hold_selectors.still_open(ref):
        hold_services.hold_release(item=ref, curator=request.user)  # type: ignore[arg-type]
        return render(request, "review/_hold.html", context | {"decided": True})
    return render(request, "review/_hold.html", context | hold_context(request, ref))
