"""The queue's per-row pieces rendered in Python: a row's compact word diff and its "taken"
tag. As included templates they were most of the queue page's rendering time (25 rows, each
including two templates); the markup is the same. And two of its filter form's: whether one is
set, and a label drawn shorter than it reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django import template
from django.forms import BoundField, Form
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import SafeString, mark_safe

from review.diff import Segment

register = template.Library()

_GAP = '<span class="gap" title="unchanged text left out">…</span>'
_SPOKEN = {"delete": ("del", "removed: "), "insert": ("ins", "added: ")}


def _segment(segment: Segment) -> str:
    if segment.op == "equal":
        return escape(segment.text)
    if segment.op == "gap":
        return _GAP
    if segment.op == "case":  # the newer's words, in another case or width than the older's
        return (
            f'<span class="case" title="written “{escape(segment.was)}” in the other text">'
            f'<span class="visually-hidden">in another case: </span>{escape(segment.text)}</span>'
        )
    tag, spoken = _SPOKEN.get(segment.op, _SPOKEN["insert"])
    flagged = ""
    if segment.flag:  # a number among them only where the texts' numbers differ (`compact`)
        flagged = f' class="flagged" title="{escape(segment.flag)} differs"'
    return (
        f'<{tag}{flagged}><span class="visually-hidden">{spoken}</span>'
        f"{escape(segment.text)}</{tag}>"
    )


@register.filter
def compact_diff(segments: Iterable[Segment]) -> SafeString:
    """A compact word diff (review.diff.compact): the changed words with a few words of context.
    Deleted and inserted words are named for screen readers; flagged words (digits, names,
    weekdays, months, numbers as words) are outlined and titled."""
    inner = " ".join(_segment(segment) for segment in segments)
    return mark_safe(f'<span class="diff" dir="auto">{inner}</span>')


@register.filter
def taken(held: Mapping[str, str], item_id: str) -> SafeString:
    """ " taken by NAME" when another curator holds the item (`holds.holders`), else nothing."""
    holder = held.get(item_id)
    if holder is None:
        return mark_safe("")
    return mark_safe(f' <span class="tag taken">taken by {escape(holder)}</span>')


@register.filter
def filters_set(form: Form) -> bool:
    """Whether a filter form has a field set to other than its default (blank, or a choice's
    `default`): the queue shows its filters open on a phone then, and folded otherwise."""
    for name, field in form.fields.items():
        value = str(form.data.get(name, "")).strip()
        if value and value != getattr(field, "default", ""):
            return True
    return False


@register.filter
def label_drawn_as(field: BoundField, drawn: str) -> SafeString:
    """A field's label drawn as its last words, `drawn` ("to" of "Similarity to", after
    "Similarity from"), the words before them in visually hidden text: the label's text, so the
    field's name, stays the whole label, and holds the words seen (WCAG 2.5.3, Label in Name). A
    label that does not end in them is drawn whole: a changed label never leaves a stale word."""
    label = str(field.label)
    hidden = label.removesuffix(f" {drawn}")
    if hidden == label:
        return conditional_escape(label)
    return format_html('<span class="visually-hidden">{}</span> {}', hidden, drawn)
