"""The console's filter forms. A form validates the query string, then builds the selectors'
filters; a malformed value is a clear error naming the parameter, never a silent default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any, cast

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator

from dedup import validation
from dedup.errors import DomainError, InvalidInput, NotFound
from palace.models import DECISION_PREFIX, AuditAction
from review import selectors
from review.models import SweepRun

RECENT_RUNS = 20  # the done sweeps the queue offers to filter by
SEARCH_LENGTH = 200


class StrippedChoiceField(forms.ChoiceField):
    """A choice that ignores surrounding spaces and falls back to a default when left empty."""

    def __init__(self, *, name: str, default: str = "", **kwargs) -> None:
        self.default = default
        super().__init__(required=False, **kwargs)
        choices = cast(list[tuple[Any, Any]], self.choices)  # normalized to pairs by now
        allowed = ", ".join(str(value) for value, _ in choices if value)
        self.error_messages["invalid_choice"] = f"{name} must be one of: {allowed}."

    def to_python(self, value: object) -> str:
        return super().to_python(value).strip() or self.default


class StrippedFloatField(forms.FloatField):
    # django-stubs declares no FloatField.to_python, so mypy sees IntegerField's `int | None`.
    def to_python(self, value: object) -> float | None:  # type: ignore[override]
        return super().to_python(value.strip() if isinstance(value, str) else value)


def _similarity(name: str, label: str) -> forms.FloatField:
    message = f"{name} must be a number from 0 to 1."
    return StrippedFloatField(
        label=label,
        required=False,
        min_value=0,
        max_value=1,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
        widget=forms.TextInput(attrs={"size": 4, "inputmode": "decimal"}),
    )


def _text(label: str, size: int, **attrs: str) -> forms.CharField:
    return forms.CharField(
        label=label, required=False, widget=forms.TextInput(attrs={"size": size, **attrs})
    )


class QueueFilterForm(forms.Form):
    """The queue's filters, for the page, the bulk form and the API alike. A field's label is
    the one place its name in the console is written: the page shows it, and a refusal names
    the field by it (`review.views.common.in_console_words`); the API names the parameter."""

    type = StrippedChoiceField(
        name="type",
        label="Type",
        choices=[
            ("", "both"),
            ("drawer", "similar_to (drawers)"),
            ("entity", "possibly_same_as (entities)"),
            ("cluster", "clusters (linked groups)"),
        ],
    )
    rule = StrippedChoiceField(
        name="rule",
        label="Rule",
        choices=[
            ("", "any"),
            *((r, r) for r in selectors.DRAWER_RULES + selectors.ENTITY_RULES),
            *((r, r) for r in selectors.PROPOSAL_RULES),
        ],
    )
    wing = _text("Wing", 10)
    room = _text("Room", 10)
    kind = _text("Entity kind", 8)
    min_similarity = _similarity("min_similarity", "Similarity from")
    # The whole name, though the page shows "to" beside "Similarity from" (templates/review/
    # queue.html): alone, in a refusal or read out, "to" names nothing.
    max_similarity = _similarity("max_similarity", "Similarity to")
    status = StrippedChoiceField(
        name="status",
        label="Status",
        default="open",
        choices=[(s, s) for s in selectors.STATUSES],
    )
    order = StrippedChoiceField(
        name="order",
        label="Order",
        default="similarity",
        choices=list(selectors.ORDERS.items()),
    )
    # The box holds what a search reads: pasted longer, a text made a request line past
    # gunicorn's 4,094 bytes, answered in the API's JSON (a curator's trial); 200 characters,
    # nine bytes each once percent-encoded at worst, stay within it.
    q = forms.CharField(
        label="Search",
        required=False,
        widget=forms.SearchInput(attrs={"maxlength": SEARCH_LENGTH}),
    )
    # Any sweep's number is accepted; the list offers the recent finished ones.
    run = forms.CharField(label="Sweep proposals", required=False, widget=forms.Select)

    def __init__(self, data: Mapping[str, str] | None = None, **kwargs) -> None:
        kwargs.setdefault("auto_id", False)
        super().__init__(data, **kwargs)

    def offer_runs(self, runs: Iterable[SweepRun]) -> None:
        """Fill the sweep list (a query, so only for the page that shows it)."""
        self.fields["run"].widget.choices = [
            ("", "links, not proposals"),
            *((str(run.pk), f"sweep #{run.pk}") for run in runs),
        ]

    def clean_q(self) -> str:
        return self.cleaned_data["q"][:SEARCH_LENGTH]

    def clean_kind(self) -> str:
        """An entity kind as a write takes it: one no write can store matched nothing."""
        try:
            return validation.clean_kind(self.cleaned_data["kind"])
        except DomainError as error:
            raise forms.ValidationError(error.message, code=error.code) from error

    def clean_run(self) -> int | None:
        """A sweep's number (not a number, or 0: `invalid_id`)."""
        try:
            return selectors.run_id(self.cleaned_data["run"])
        except InvalidInput as error:
            raise forms.ValidationError(error.message, code=error.code) from error

    def clean(self) -> dict[str, Any]:
        """Values each valid alone that together select nothing by mistake (issue 13)."""
        cleaned = super().clean() or {}
        low, high = cleaned.get("min_similarity"), cleaned.get("max_similarity")
        if low is not None and high is not None and low > high:
            raise forms.ValidationError("min_similarity must not be above max_similarity.")
        if cleaned.get("run") and cleaned.get("type"):
            raise forms.ValidationError(
                f"run lists a sweep's proposals, not {cleaned['type']} links: leave type out."
            )
        if cleaned.get("rule") in selectors.PROPOSAL_RULES and not cleaned.get("run"):
            raise forms.ValidationError(
                f"rule {cleaned['rule']} is a tier of a sweep's proposals: choose the sweep (run)."
            )
        return cleaned

    def filters(self) -> selectors.QueueFilters:
        """The validated filters; an invalid form raises its first error (`first_refusal`),
        and then a sweep there is not 404 `sweep_not_found` (it listed nothing, as a sweep
        without proposals does)."""
        if not self.is_valid():
            raise first_refusal(self)
        run = self.cleaned_data["run"]
        if run is not None and not SweepRun.objects.filter(pk=run).exists():
            raise NotFound(f"run names no sweep ({run}).", code="sweep_not_found")
        return selectors.QueueFilters(**self.cleaned_data)


class AuditFilterForm(forms.Form):
    """The audit log's filters, labelled as the queue's are. A date must be one the log can
    count a day past."""

    actor = _text("Curator", 10)
    action = _text("Action", 16, placeholder="review.merge")
    item = _text("Item", 8, placeholder="d12")
    since = forms.CharField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.CharField(
        label="Until", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, data: Mapping[str, str] | None = None, **kwargs) -> None:
        kwargs.setdefault("auto_id", False)
        super().__init__(data, **kwargs)

    def _clean_day(self, name: str) -> str:
        raw = self.cleaned_data[name]
        if raw:
            try:
                day = date.fromisoformat(raw)
            except ValueError:
                day = date.max
            if day >= date.max:  # the selector filters up to the day after
                raise forms.ValidationError(f"{name} must be a date like 2026-11-29.")
        return raw

    def clean_action(self) -> str:
        """An action as the log stores it (`review.merge`), or as the API shows a decision's
        (`merge`); another is refused, where it matched nothing."""
        raw = self.cleaned_data["action"]
        action = raw if not raw or "." in raw else f"{DECISION_PREFIX}{raw}"
        if action and action not in AuditAction.values:
            shown = ", ".join(sorted(AuditAction.values))
            raise forms.ValidationError(f"action must be one of the log's actions: {shown}.")
        return action

    def clean_since(self) -> str:
        return self._clean_day("since")

    def clean_until(self) -> str:
        return self._clean_day("until")

    def clean(self) -> dict:
        """A range that ends before it starts matches nothing, and "No entries" would read as an
        empty log: an error, as the queue's similarity range is."""
        cleaned = super().clean() or {}
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and date.fromisoformat(since) > date.fromisoformat(until):
            raise forms.ValidationError("since must not be after until.")
        return cleaned

    def filters(self) -> selectors.AuditFilters:
        """The validated filters; an invalid form raises the first error as `InvalidInput`."""
        if not self.is_valid():
            raise InvalidInput(first_error(self))
        return selectors.AuditFilters(**self.cleaned_data)


def first_error(form: forms.Form) -> str:
    """The first field's first message, in the order the fields are declared."""
    for name in form.fields:
        if name in form.errors:
            return cast(str, form.errors[name][0])  # messages, as the form renders them
    return cast(str, next(iter(form.errors.values()))[0])


def first_refusal(form: forms.Form) -> InvalidInput:
    """The form's first error as the API answers it: `invalid_id` for a malformed id (as
    anywhere), else `invalid`."""
    message = first_error(form)
    codes = {
        error.code
        for errors in form.errors.as_data().values()
        for error in errors
        if message in error.messages
    }
    return InvalidInput(message, code="invalid_id" if "invalid_id" in codes else None)


def queue_filters(params: Mapping[str, str]) -> selectors.QueueFilters:
    """Queue filters from query parameters, or `InvalidInput` naming the first bad one."""
    return QueueFilterForm(params).filters()


def audit_filters(params: Mapping[str, str]) -> selectors.AuditFilters:
    return AuditFilterForm(params).filters()


class _UsernameBounded:
    """Django's login form sets the username's maximum length after building the field, so
    nothing checks it; a failed login of a longer name then reached django-axes, whose record
    of it (255 characters at most) PostgreSQL refused with a 500. Checked here, it is a form
    error, before any authentication."""

    fields: dict[str, forms.Field]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        username = cast(forms.CharField, self.fields["username"])
        username.validators.append(MaxLengthValidator(username.max_length))


class LoginForm(_UsernameBounded, AuthenticationForm):
    """The console's login form."""


class AdminLoginForm(_UsernameBounded, AdminAuthenticationForm):
    """The admin's login form."""
