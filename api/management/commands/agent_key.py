"""`manage.py agent_key create AGENT --wings a,b --rights read,write [--expires 30d] | list |
revoke ID`: an agent's keys from the command line. A new key is printed once."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from api.models import RIGHTS, AgentKey
from dedup.commands import CastellanCommand
from dedup.errors import DomainError
from dedup.validation import clean_username

DURATION = re.compile(r"^([0-9]{1,6})([dhm])$")  # up to 999,999 days: within any date
UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def duration(text: str) -> timedelta:
    match = DURATION.match(text)
    if match is None:
        raise CommandError(
            f"--expires {text[:40]!r}: use a number (at most six digits) and d, h or m, e.g. 30d."
        )
    return timedelta(**{UNITS[match[2]]: int(match[1])})


def names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class Command(CastellanCommand):
    help = "Create, list and revoke agent keys."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="A new key for an agent, printed once.")
        create.add_argument("agent")
        create.add_argument("--wings", required=True, help='Comma-separated wings, or "*".')
        create.add_argument("--rights", default="read,write", help="Any of read,write,delete.")
        create.add_argument("--expires", help="Lifetime, e.g. 30d, 12h.")
        create.add_argument("--name", default="")
        create.add_argument(
            "--unless-active",
            action="store_true",
            help="Mint nothing if the agent has an active key; say how to mint another.",
        )
        listing = actions.add_parser("list", help="Every key (never the key itself).")
        listing.add_argument("--agent")
        revoke = actions.add_parser("revoke", help="Revoke a key by its prefix (final).")
        revoke.add_argument("id", help="The key's prefix, as `list` shows it.")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"handle_{action}")(**options)

    def handle_create(
        self,
        *,
        agent: str,
        wings: str,
        rights: str,
        expires: str | None,
        name: str,
        unless_active: bool = False,
        **_: Any,
    ) -> None:
        try:
            agent = clean_username(agent, "agent")
        except DomainError as error:
            raise CommandError(error.message) from error
        limit = AgentKey._meta.get_field("name").max_length or 0
        if len(name) > limit:
            raise CommandError(f"--name: at most {limit} characters.")
        if unless_active and self.tell_active(agent, wings, rights):
            return
        wanted = names(rights)
        unknown = sorted(set(wanted) - set(RIGHTS))
        if unknown or not wanted:
            raise CommandError(f"--rights: unknown {unknown}; use any of {', '.join(RIGHTS)}.")
        if not names(wings):
            raise CommandError("--wings: name at least one wing, or *.")
        expires_at = timezone.now() + duration(expires) if expires else None
        key, secret = AgentKey.objects.issue(
            agent=agent, wings=names(wings), rights=wanted, expires_at=expires_at, name=name
        )
        self.stdout.write(f"Agent key {key.prefix} for {agent} (shown once, store it now):")
        self.stdout.write(secret)

    def tell_active(self, agent: str, wings: str, rights: str) -> bool:
        """Say so if the agent has an active key (whose secret was shown once, when minted)."""
        active = [
            key
            for key in AgentKey.objects.filter(user__username=agent, revoked=False)
            if not key.has_expired
        ]
        if not active:
            return False
        prefixes = ", ".join(key.prefix for key in active)
        self.stdout.write(
            f"Agent {agent} has an active key ({prefixes}), shown when it was minted. "
            f"Mint another: manage.py agent_key create {agent} --wings '{wings}' --rights {rights}"
        )
        return True

    def handle_list(self, *, agent: str | None, **_: Any) -> None:
        keys = AgentKey.objects.select_related("user").order_by("created")
        if agent:
            keys = keys.filter(user__username=agent)
        for key in keys:
            state = "revoked" if key.revoked else "expired" if key.has_expired else "active"
            self.stdout.write(
                f"{key.prefix}  {key.user.get_username()}  wings={','.join(key.wings)}  "
                f"rights={','.join(key.rights)}  {state}  expires={key.expiry_date or '-'}  "
                f"last_used={key.last_used_at or '-'}"
            )

    def handle_revoke(self, *, id: str, **_: Any) -> None:
        updated = AgentKey.objects.filter(prefix=id).update(revoked=True)
        if not updated:
            raise CommandError(f"No agent key with id {id!r}.")
        self.stdout.write(f"Revoked agent key {id}.")
