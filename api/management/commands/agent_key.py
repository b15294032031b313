"""`manage.py agent_key create AGENT --wings a,b --rights read,write [--expires 30d] | list |
revoke ID`: an agent's keys from the command line. A new key is printed once."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from api.models import AgentKey, key_for_agent, refuse_an_agent, split_names
from dedup.commands import CastellanCommand, command_line
from dedup.validation import clean_username

DURATION = re.compile(r"^([0-9]{1,6})([dhm])$")  # up to 999,999 days: within any date
UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def duration(text: str) -> timedelta:
    match = DURATION.match(text)
    if match is None:
        raise CommandError(
            f"--expires {text[:40]!r}: use a number (at most six digits) and d, h or m, e.g. 30d."
        )
    if int(match[1]) == 0:
        raise CommandError("--expires 0: a key that expires at once is no key; give 1m or more.")
    return timedelta(**{UNITS[match[2]]: int(match[1])})


def shown(value: object) -> str:
    """A stored list of wings or rights as `create` takes it ("a,b"), whatever the row holds: a
    row saved before the admin checked them may hold anything JSON does (e.g. ["fly", 5])."""
    if isinstance(value, list):
        return ",".join(item if isinstance(item, str) else json.dumps(item) for item in value)
    return json.dumps(value)


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
        agent = clean_username(agent, "agent")
        limit = AgentKey._meta.get_field("name").max_length or 0
        if len(name) > limit:
            raise CommandError(f"--name: at most {limit} characters.")
        try:  # the admin's rule too; asked first, so --unless-active tells a person nothing
            refuse_an_agent(agent)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        if unless_active and self.tell_active(agent, wings, rights):
            return
        expires_at = timezone.now() + duration(expires) if expires is not None else None
        try:
            # `issue` holds them to the admin's rule (`clean_scope`), so a key is refused the
            # same way everywhere.
            key, secret = AgentKey.objects.issue(
                agent=agent,
                wings=split_names(wings),
                rights=split_names(rights),
                expires_at=expires_at,
                name=name,
            )
        except ValidationError as error:  # the agent is an argument, the others options
            raise CommandError(
                " ".join(
                    " ".join(m) if field == "agent" else f"--{field}: {' '.join(m)}"
                    for field, m in error.message_dict.items()
                )
            ) from error
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
        again = command_line("agent_key", "create", agent, "--wings", wings, "--rights", rights)
        self.stdout.write(
            f"Agent {agent} has an active key ({prefixes}), shown when it was minted. "
            f"Mint another: {again}"
        )
        return True

    def handle_list(self, *, agent: str | None, **_: Any) -> None:
        keys = (
            AgentKey.objects.select_related("user")
            .annotate(for_agent=key_for_agent())
            .order_by("created")
        )
        if agent:
            keys = keys.filter(user__username=agent)
        for key in keys:
            state = "revoked" if key.revoked else "expired" if key.has_expired else "active"
            if state == "active" and not key.for_agent:  # refused at sign-in (`api.authentication`)
                state = "refused: made for a person's login"
            self.stdout.write(
                f"{key.prefix}  {key.user.get_username()}  wings={shown(key.wings)}  "
                f"rights={shown(key.rights)}  {state}  expires={key.expiry_date or '-'}  "
                f"last_used={key.last_used_at or '-'}"
            )

    def handle_revoke(self, *, id: str, **_: Any) -> None:
        keys = AgentKey.objects.filter(prefix=id)
        if not keys.exists():
            raise CommandError(f"No agent key with id {id!r}.")
        if not keys.filter(revoked=False).update(revoked=True):
            self.stdout.write(f"Agent key {id} was revoked already.")
            return
        self.stdout.write(f"Revoked agent key {id}.")
