"""What the models share: label lengths, who acts, and the review fields of a link."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, TypeAlias

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    from django.contrib.auth.models import User


LABEL_MAX_LENGTH = 100
# The group an agent's user is put in when its first key is made (`api.models.AgentKey`): members
# may write through the API, within their keys' scopes. Named here, below every app, so a command
# making a curator can tell an agent's user from a person's.
AGENTS_GROUP = "agents"
# Every link model's undecided status: the value of its `Status.OPEN`.
OPEN_STATUS = "open"

# Who acts: a curator (or an anonymous request) in the console and the API; None for a command or a
# migration.
Actor: TypeAlias = "User | AnonymousUser | None"


def acting_user(actor: Actor) -> User | None:
    """The user to store as the one who acted: none for a command or an anonymous request."""
    if actor is None or isinstance(actor, AnonymousUser) or not actor.is_authenticated:
        return None
    return actor


class ReviewedLink(models.Model):
    """What the two link models share: how alike the sides are, and the curator's decision.

    `status` is declared by each link model, since the decisions differ (only entities take an
    alias); "open" is always the undecided state.
    """

    similarity = models.FloatField()
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    # Declared by each link model, with its own choices.
    Status: ClassVar[type[models.TextChoices]]
    status: models.CharField[str, str]

    class Meta:
        abstract = True
        ordering = ["-similarity", "id"]

    def mark_decided(self, actor: Actor) -> None:
        """Stamp the decision on the link (the status is set by the decision itself)."""
        self.decided_at = timezone.now()
        self.decided_by = acting_user(actor)

    def reopen(self) -> None:
        self.status = OPEN_STATUS
        self.decided_at = None
        self.decided_by = None
