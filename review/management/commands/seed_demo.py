"""A small, realistic palace for a newcomer, written through the real write path.

Repeats, case variants, typos, near-miss facts, two agents' diaries and entity sightings with
spelling variants and ambiguous names, so the links and the review queue have real work in them.
Seeded once: the seed is recorded in the audit log (`demo.seed`), and a later run (every `make
run`) writes nothing, so a curator's renames, moves and deletions stand. A palace seeded before
that record existed is recognised by its demo drawers. Every run prints the curator's login; the
demo agent `scout` gets a key only when it has no active one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from dedup import services
from dedup.commands import CastellanCommand, progress_bar
from dedup.user_names import claim_user_name
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer
from review.curators import curators_group, refuse_an_agents
from review.demo import SIGHTINGS, Write, demo_plan

if TYPE_CHECKING:
    from django.contrib.auth.models import User

DEMO_USER = "curator"
DEMO_PASSWORD = "castellan-demo"


class Command(CastellanCommand):
    help = "Fill the palace with realistic demo data and print a curator login and an API token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000",
            help="Where the app will answer, for the example it prints (make run passes its PORT).",
        )

    def handle(self, *args: Any, no_progress: bool, url: str, **options: Any) -> None:
        seeded = self.seeded()
        token: Token | None = None
        if seeded:
            self.stdout.write(
                f"Demo palace: seeded already ({seeded}); nothing written, so your changes "
                "and deletions stand."
            )
            try:
                with transaction.atomic():
                    _, token = self.curator()
            except CommandError as refusal:  # the store's own users stand: say why, serve on
                self.stderr.write(f"No demo curator login: {refusal}")
        else:
            with transaction.atomic():
                token = self.seed(no_progress, options["verbosity"])
        if token is not None:
            self.stdout.write(
                f"Curator login: {DEMO_USER} / {DEMO_PASSWORD}  (the first seed's password, "
                "unless changed since)"
            )
            self.stdout.write(f"API token:     {token.key}  (the curator's own)")
        # By name: the API's app owns the keys, and review may not import it. A key is minted
        # only the first time: an agent with an active key is told how to mint another.
        call_command(
            "agent_key",
            "create",
            "scout",
            "--wings",
            "*",
            "--rights",
            "read,write,delete",
            "--unless-active",
            stdout=self.stdout,
        )
        self.stdout.write(
            f'Use it: curl -H "Authorization: Bearer <key>" {url.rstrip("/")}/api/wings'
        )

    def seeded(self) -> str:
        """When the demo was seeded, or "" if it never was."""
        marker = AuditEntry.objects.filter(action=AuditAction.DEMO_SEED).order_by("pk").first()
        if marker is not None:
            return f"on {marker.created_at:%Y-%m-%d %H:%M} UTC"
        if Drawer.objects.filter(source__kind="demo").exists():
            return "demo drawers found"
        return ""

    def seed(self, no_progress: bool, verbosity: int) -> Token:
        _, token = self.curator()  # first: a refused name writes nothing
        plan = demo_plan(random.Random(2026))
        with progress_bar(
            verbosity, hidden=no_progress, total=len(plan), desc="drawers", unit=" drawers"
        ) as bar:
            stored, duplicates, similar, written = self.write(plan, bar.update)
        with progress_bar(
            verbosity, hidden=no_progress, total=len(SIGHTINGS), desc="mentions", unit=" names"
        ) as bar:
            mentions = self.mention(written, bar.update)
        AuditEntry.objects.record(
            actor=None,
            action=AuditAction.DEMO_SEED,
            target_type=AuditTarget.PALACE,
            target_id="demo",
            after={"writes": len(plan), "stored": stored, "mentions": mentions},
        )
        self.stdout.write(
            f"Demo palace: {len(plan)} writes, {stored} stored, {duplicates} not stored again "
            f"(exact copies or replays), {similar} linked to similar drawers, {mentions} mentions."
        )
        return token

    def write(self, plan: list[Write], done: Callable[[], object]) -> tuple[int, int, int, list]:
        """Every planned write through the write path: (stored, duplicates, similar, drawers)."""
        stored = similar = duplicates = 0
        written = []
        for index, (wing, room, content, mode, agent) in enumerate(plan):
            result = services.drawer_write_in(
                wing=wing,
                room=room,
                content=content,
                mode=mode,
                agent=agent or "seed",
                # No derived id: the demo is seeded once, in one transaction, so there is
                # nothing to replay, and an id derived from the plan (uuid5 of index and text,
                # as it was) is one any key could take first on a store that has keys.
                source={"kind": "demo", "item": index},
            )
            stored += result.created
            duplicates += not result.created
            similar += bool(result.links)
            written.append(result.drawer)
            done()
        return stored, duplicates, similar, written

    def mention(self, written: list[Drawer], done: Callable[[], object]) -> int:
        """Each sighting, on the drawer that names it (the first that says those words: a write
        of them again stored none)."""
        holding: dict[str, Drawer] = {}
        for drawer in written:
            holding.setdefault(drawer.content, drawer)
        mentions = 0
        for name, kind, text in SIGHTINGS:
            services.mention_add(
                drawer=holding[text], name=name, kind=kind, provenance={"kind": "demo"}
            )
            mentions += 1
            done()
        return mentions

    def curator(self) -> tuple[User, Token]:
        """The demo's curator, made the first time under the rule of every login's name (the
        caller's transaction stores it): a store whose admin made "Curator" gets no second
        login that reads as theirs, and an agent named "curator" is not made a curator."""
        User = get_user_model()
        user = User.objects.filter(username=DEMO_USER).first()
        refuse_an_agents(user)
        if user is None:
            try:
                claim_user_name(DEMO_USER)
            except ValidationError as error:
                raise CommandError(
                    f"{error.messages[0].removesuffix(' Choose another name.')} The demo's "
                    f"curator is always {DEMO_USER}: rename that user, or seed another "
                    "database."
                ) from None
            user = User(username=DEMO_USER, is_staff=True)
            user.set_password(DEMO_PASSWORD)
            user.save()
        user.groups.add(curators_group())
        # Let the demo curator use the admin over the palace too.
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="palace"))
        token, _ = Token.objects.get_or_create(user=user)
        return user, token
