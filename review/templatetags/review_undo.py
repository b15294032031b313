"""`{% undo_offer %}`: the Undo button after a decision (see `review.undo`)."""

from __future__ import annotations

from django import template

from review.undo import take_undo_offer
from review.views.common import htmx_page

register = template.Library()


@register.inclusion_tag("review/_undo_offer.html", takes_context=True)
def undo_offer(context: template.Context) -> dict:
    request = context.get("request")
    # The page the offer is shown on: after an in-place decision that is the page htmx is on
    # (with the queue filter), not the decision's URL this request was posted to.
    page = (request and htmx_page(request)) or (request and request.get_full_path())
    return {
        "page": page,
        "offer": take_undo_offer(request) if request is not None else None,
        "csrf_token": context.get("csrf_token"),
        "request": request,
    }
