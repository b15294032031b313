"""The curators group: who may decide review items; and what refuses a new curator's login, said
as the commands that make one (`create_curator`, `seed_demo`) say it."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from dedup.user_names import shown
from palace.models import AGENTS_GROUP, DECIDE_PERMISSION

__all__ = ["DECIDE_PERMISSION", "GROUP", "curators_group", "name_refused", "refuse_an_agents"]

GROUP = "curators"


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        Permission.objects.get(content_type__app_label="palace", codename="decide")
    )
    return group


@contextmanager
def name_refused(username: str) -> Iterator[None]:
    """A new curator's name refused by the rule of every login's (`dedup.user_names`), said."""
    try:
        yield
    except ValidationError as error:
        raise CommandError(
            f"{' '.join(error.messages)} No user {shown(username)} was created."
        ) from None


def refuse_an_agents(user: Any) -> None:
    """An agent's user writes with its keys' scopes; a curator's rights on top of them would let
    any holder of those keys decide review items."""
    if user is not None and user.groups.filter(name=AGENTS_GROUP).exists():
        raise CommandError(
            f"{user.username} is an agent's user (agent_key made it): a curator is a person; "
            "choose another name."
        )
