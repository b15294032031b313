"""`{% undo_offer %}`: the Undo button after a decision (see `review.undo`)."""

from __future__ import annotations

from django import template

from review.undo import take_undo_offer

register = template.Library()


@register.inclusion_tag("review/_undo_offer.html", takes_context=True)
def undo_offer(context: template.Context) -> dict:
    request = context.get("request")
    return {
        "offer": take_undo_offer(request) if request is not None else None,
        "csrf_token": context.get("csrf_token"),
        "request": request,
    }
