"""Item holds in the console: who holds the item a curator looks at, renewed while they stay."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from dedup.errors import DomainError
from review.curators import DECIDE_PERMISSION
from review.items import ItemRef
from review.selectors import holds as hold_selectors
from review.services import holds as hold_services


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
@require_POST
def hold(request: HttpRequest, item_id: str) -> HttpResponse:
    """The item page's renewal (htmx, every HOLD_RENEW_SECONDS): the hold's state, again."""
    try:
        ref = ItemRef.parse(item_id)
    except DomainError as error:
        raise Http404(error.message) from error
    context = {"ref": ref, "renew_seconds": hold_services.HOLD_RENEW_SECONDS}
    return render(request, "review/_hold.html", context | hold_context(request, ref))
