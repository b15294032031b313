"""Agent keys: an agent's own credentials for the API, hashed at rest and shown once.

The hashing, the prefix lookup and revocation come from djangorestframework-api-key; a key here
adds who it writes as (its user, the agent identity), the wings it reaches, its rights and when
it was last used.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import ClassVar, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Exists, ExpressionWrapper, OuterRef, Q
from rest_framework_api_key.models import AbstractAPIKey, APIKeyManager

from dedup.errors import DomainError
from dedup.user_names import claim_user_name, refuse_a_look_alike
from dedup.validation import clean_place_name
from palace.models import AGENTS_GROUP
from review.curators import GROUP as CURATORS_GROUP

READ, WRITE, DELETE = "read", "write", "delete"
RIGHTS = (READ, WRITE, DELETE)
ALL_WINGS = "*"


# --- a key's scope: the one rule for the admin, the `agent_key` command and the manager ------


def split_names(text: str) -> list[str]:
    """Names typed as "a, b" (a command's --wings and --rights, the admin's wings field)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def clean_rights(value: object) -> list[str]:
    """At least one of RIGHTS, in RIGHTS' order: what a key stores. The admin's JSON once took
    anything, e.g. ["fly", 5], which `agent_key list` could not show."""
    if not isinstance(value, list | tuple) or not all(isinstance(r, str) for r in value):
        raise ValidationError(f"Each right is one of {', '.join(RIGHTS)}.", code="invalid")
    if not value:
        raise ValidationError(f"Give at least one of {', '.join(RIGHTS)}.", code="invalid")
    unknown = sorted(set(value) - set(RIGHTS))
    if unknown:
        raise ValidationError(
            f"Unknown rights {unknown}; use any of {', '.join(RIGHTS)}.", code="invalid"
        )
    return [right for right in RIGHTS if right in set(value)]


def clean_wings(value: object) -> list[str]:
    """At least one wing name, trimmed, each once, sorted; or `*` alone (every wing: beside
    another wing it is refused, not folded, as the key's reach would not be what was typed).
    Each name by a write's rule for a new wing (`clean_place_name`): a key for a name no write
    can make (a blank "\u2800", "*,alpha") showed its holder a wing that was none. A `/` is
    allowed, as an import's restored wing has one (`restored`): keys name it, and MCP reaches
    it, where a path cannot."""
    if not isinstance(value, list | tuple) or not all(isinstance(w, str) for w in value):
        raise ValidationError("Each wing is a name (text), or * for every wing.", code="invalid")
    if not value:
        raise ValidationError("Name at least one wing, or *.", code="invalid")
    if any(wing.strip() == ALL_WINGS for wing in value):
        if {wing.strip() for wing in value} != {ALL_WINGS}:
            raise ValidationError(
                "* is every wing: give it alone, or name the wings without it.", code="invalid"
            )
        return [ALL_WINGS]
    try:
        return sorted({clean_place_name(wing, "wing", restored=True) for wing in value})
    except DomainError as error:
        raise ValidationError(error.message, code="invalid") from error


def clean_scope(*, wings: object, rights: object) -> tuple[list[str], list[str]]:
    """The wings and rights a key stores, or a ValidationError naming each field at fault."""
    cleaned: dict[str, list[str]] = {}
    errors: dict[str, ValidationError] = {}
    for field, clean, value in (("wings", clean_wings, wings), ("rights", clean_rights, rights)):
        try:
            cleaned[field] = clean(value)
        except ValidationError as error:
            errors[field] = error
    if errors:
        raise ValidationError(errors)
    return cleaned["wings"], cleaned["rights"]


# --- a key's user: an agent, never a person's login -------------------------------------------


def agent_condition(user: str = "") -> Q:
    """An agent's login, as a condition on users (`user`: the path to one, e.g. "user__" from
    a key): in the agents' group, and no person's: not staff, not a superuser, no password one
    can sign in with (Django marks an unusable one with a leading "!"), not a curator (in the
    curators' group; an agent granted the decide permission itself stays one). Put in the
    agents' group, a person's login (carol, a curator with a password) got a key that decided
    review items as her: a membership alone is no agent. One rule, in SQL, for the sign-in
    (`key_for_agent`), the admin's list of agents, `agent_key create` and a person's rights
    (`api.scopes`)."""
    through = get_user_model().groups.through.objects
    user_id = OuterRef(f"{user}id" if user else "pk")
    return Q(
        Exists(through.filter(user_id=user_id, group__name=AGENTS_GROUP)),
        ~Exists(through.filter(user_id=user_id, group__name=CURATORS_GROUP)),
        **{
            f"{user}is_staff": False,
            f"{user}is_superuser": False,
            f"{user}password__startswith": UNUSABLE_PASSWORD_PREFIX,
        },
    )


def agent_users() -> models.QuerySet:
    """The users a key may be made for in the admin: agents (`agent_condition`)."""
    return get_user_model().objects.filter(agent_condition()).order_by("username")


def is_agent(user: object) -> bool:
    """Whether a stored user is an agent's (`agent_condition`), not a person's login: one
    query, whatever the user object holds (its fields may be older than its row)."""
    pk = getattr(user, "pk", None)
    return pk is not None and agent_users().filter(pk=pk).exists()


def key_for_agent() -> ExpressionWrapper:
    """`is_agent` of a key's user, as an expression on agent keys: a key is read with it in
    the one query that signs it in (`AgentKeyManager.get_usable_keys`)."""
    return ExpressionWrapper(agent_condition("user__"), output_field=models.BooleanField())


def refuse_a_person(user: object) -> None:
    """The one rule of `agent_key create` and the admin: a key is made for an agent, or for a
    name no one holds yet (the first key makes it an agent), never for a person's login (a
    viewer, a curator, an admin, with a password or without, in the agents' group or not):
    its key would write and delete whatever their role, and decide review items as them."""
    stored = getattr(user, "pk", None) is not None
    if stored and not is_agent(user):
        name = user.get_username()  # type: ignore[attr-defined]
        raise ValidationError(
            f"{name} is a person's login: made an agent, they could write and delete "
            "whatever their role. Name the agent otherwise.",
            code="invalid",
        )


def refuse_an_agent(name: str) -> None:
    """What a key's agent named by `name` is held to, before anything is written: an agent, or
    a new name that reads as no one's."""
    refuse_a_person(get_user_model().objects.filter(username=name).first())
    refuse_a_look_alike(name)


class AgentKeyManager(APIKeyManager):
    def get_usable_keys(self) -> models.QuerySet[AgentKey]:
        """With its user, and whether that user is an agent (`for_agent`, `agent_condition`): a
        key whose login is a person's (the admin made it before it refused one, or the login
        was since put in the curators' group, given a password or made staff) is refused at
        sign-in (`api.authentication`), in the query that finds the key."""
        return super().get_usable_keys().select_related("user").annotate(for_agent=key_for_agent())

    def issue(
        self,
        *,
        agent: str,
        wings: Iterable[str],
        rights: Iterable[str],
        expires_at: datetime | None = None,
        name: str = "",
    ) -> tuple[AgentKey, str]:
        """A new key for `agent` (a user, made on first use and put in the agents group) and
        the key itself, which is not stored and cannot be shown again. Wings or rights that
        `clean_scope` refuses raise its ValidationError before anything is written. Who `agent`
        may be its callers ask first (`refuse_an_agent`, before a command writes anything); a
        login made here has no password. It is asked again here, under a lock on how the name
        reads: two made at once whose names read alike ("Carol", "carol") had each passed the
        callers' check, made before either was stored; now the second waits for the first and
        is refused. So is a person's login (`refuse_a_person`, asked once the login is in the
        agents' group), such as one made meanwhile under the very name (`createsuperuser Dan`
        beside `agent_key create Dan`), which the callers' check had not seen."""
        wings, rights = clean_scope(wings=list(wings), rights=list(rights))
        with transaction.atomic():
            try:
                claim_user_name(agent)
            except ValidationError as error:
                raise ValidationError({"agent": error.messages}) from error
            user, created = get_user_model().objects.get_or_create(username=agent)
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            user.groups.add(Group.objects.get_or_create(name=AGENTS_GROUP)[0])
            try:  # a person's login (made meanwhile by its very name) is no agent for a group
                refuse_a_person(user)
            except ValidationError as error:
                raise ValidationError({"agent": error.messages}) from error
            key, secret = self.create_key(
                user=user,
                name=name or agent,
                wings=wings,
                rights=rights,
                expiry_date=expires_at,
            )
            return cast(AgentKey, key), secret


class AgentKey(AbstractAPIKey):
    """A key bound to one agent (its user) and a set of wings (`*`: all) with rights."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_keys"
    )
    wings = models.JSONField(default=list, help_text='Wing names, or ["*"] for every wing.')
    rights = models.JSONField(default=list, help_text="Any of read, write, delete.")
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects: ClassVar[AgentKeyManager] = AgentKeyManager()

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "agent key"
        verbose_name_plural = "agent keys"

    def __str__(self) -> str:
        return f"{self.prefix} ({self.user.get_username()})"

    def clean(self) -> None:
        super().clean()
        if self._state.adding and self.user_id is not None:
            try:
                refuse_a_person(self.user)
            except ValidationError as error:
                raise ValidationError({"user": error}) from error
        self.wings, self.rights = clean_scope(wings=self.wings, rights=self.rights)
