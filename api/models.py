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
from django.contrib.auth.models import Group
from django.db import models, transaction
from rest_framework_api_key.models import AbstractAPIKey, APIKeyManager

from palace.models import AGENTS_GROUP

READ, WRITE, DELETE = "read", "write", "delete"
RIGHTS = (READ, WRITE, DELETE)
ALL_WINGS = "*"


class AgentKeyManager(APIKeyManager):
    def get_usable_keys(self) -> models.QuerySet[AgentKey]:
        return super().get_usable_keys().select_related("user")

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
        the key itself, which is not stored and cannot be shown again."""
        with transaction.atomic():
            user, created = get_user_model().objects.get_or_create(username=agent)
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            user.groups.add(Group.objects.get_or_create(name=AGENTS_GROUP)[0])
            key, secret = self.create_key(
                user=user,
                name=name or agent,
                wings=sorted(set(wings)),
                rights=[right for right in RIGHTS if right in set(rights)],
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
