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
from django.core.management import call_command
from django.core.management.base import CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from dedup import services
from dedup.commands import CastellanCommand, progress_bar
from palace.models import AuditAction, AuditEntry, AuditTarget, Drawer
from review.curators import curators_group

if TYPE_CHECKING:
    from django.contrib.auth.models import User

DEMO_USER = "curator"
DEMO_PASSWORD = "castellan-demo"

FACTS = {
    ("castellan", "decisions"): [
        "We decided to use PostgreSQL in production because the team already runs it well.",
        "SQLite stays the embedded default so a newcomer can run the app with nothing installed.",
        "Every deduplication verdict must be deterministic and explained by its evidence.",
        "A wrong merge is worse than a missed one, so near duplicates are linked, never merged.",
        "The review console is server rendered with htmx; we do not build a single page app.",
        "Entity names converge only on safe evidence: same name, same key, alias or one typo.",
        "Drawer content is verbatim and is never rewritten by normalisation.",
        "The API uses token authentication for agents and session authentication for curators.",
        "Background sweeps run through the Django tasks database backend, not threads.",
        "We pin dependencies in a constraints file so CI installs the same versions.",
    ],
    ("castellan", "ops"): [
        "For local development always use port 8080 for the API server.",
        "Backups run nightly at two in the morning and are kept for thirty days.",
        "The deploy script must run database migrations before restarting the web workers.",
        "Production logs are shipped to the central collector every five minutes.",
        "Rotate the API tokens of departed agents within one working day.",
        "The staging database is refreshed from an anonymised production dump every Monday.",
        "Disk usage alerts fire at eighty percent on the database volume.",
        "Release tags follow calendar versioning such as 2026.11.1.",
    ],
    ("castellan", "architecture"): [
        "Candidates come from indexed hash and fingerprint lookups, then a full text query.",
        "Similarity is edit similarity up to two thousand characters and trigram Jaccard beyond.",
        "Texts under twelve normalised characters are only ever exact or normalized duplicates.",
        "A diary entry is only compared with the same agent's entries.",
        "Superseded drawers are never candidates and never block saying a thing again.",
        "Links always point from the newer drawer to the older one.",
    ],
    ("personal", "preferences"): [
        "Ada prefers dark mode in every editor and terminal.",
        "Grace likes meeting notes sent as plain text, not attachments.",
        "Katarina wants code reviews before lunch, never on Friday afternoons.",
        "Johnson drinks his coffee black and his tea with lemon.",
        "The team prefers asynchronous standups written in the chat channel.",
    ],
    ("research", "papers"): [
        "Edit distance with adjacent transpositions is the optimal string alignment distance.",
        "Trigram Jaccard similarity is cheap to compute for long documents.",
        "Blocking keys reduce the number of pairs compared in record linkage.",
        "Precision should be measured per tier of a deduplication pipeline.",
        "Quarantine proposed merges before applying them to production data.",
    ],
}

NEAR_MISSES = {
    ("castellan", "ops"): [
        "For local development always use port 8081 for the API server.",
        "Backups run nightly at three in the morning and are kept for thirty days.",
        "Disk usage alerts fire at ninety percent on the database volume.",
    ],
    ("personal", "preferences"): [
        "Ada prefers light mode in every editor and terminal.",
    ],
}

SUBJECTS = [
    "The billing service",
    "The search index",
    "The ingestion job",
    "The mobile app",
    "The auth gateway",
    "The reporting API",
    "The mail relay",
    "The cache layer",
]
VERBS = ["depends on", "was migrated to", "is monitored by", "is owned by", "talks to"]
OBJECTS = [
    "the payments team",
    "PostgreSQL 16",
    "the observability stack",
    "the platform group",
    "the message broker",
    "the data warehouse",
    "the edge proxy",
]

DIARY_OPENINGS = [
    "This morning I",
    "After lunch I",
    "Late today I",
    "Before the stand-up I",
    "While the build ran I",
    "At the end of the sprint I",
]
DIARY_ACTIVITIES = [
    "reviewed the open pull requests and left comments on the migration",
    "paired on the flaky browser test, which turned out to be a race in the page load",
    "wrote the runbook for rotating API tokens of departed agents",
    "profiled the candidate query on rooms with a hundred thousand drawers",
    "read about blocking strategies for record linkage at scale",
    "cleaned up the demo data and worked through the review queue",
    "fixed a confusing sentence in the README quick start",
    "talked with Ada about the threshold for near duplicates",
    "merged the checkpoint endpoint after a second review",
    "updated the constraints file and re-ran the whole suite on PostgreSQL",
    "triaged three bug reports about entity aliases",
    "measured the write path against a plain insert",
]

READERS = ["Ada", "Grace", "Katarina", "Johnson", "Maria", "the scout agent", "the scribe agent"]
BOOKS = [
    "Designing Data-Intensive Applications",
    "The Pragmatic Programmer",
    "Database Internals",
    "Accelerate",
    "Refactoring",
    "Working Effectively with Legacy Code",
    "Site Reliability Engineering",
    "Domain-Driven Design",
    "Release It!",
    "A Philosophy of Software Design",
]
TOPICS = [
    "onboarding new engineers",
    "planning the storage migration",
    "the reliability review",
    "the architecture reading group",
    "preparing the quarterly roadmap",
    "learning about incident response",
]

SIGHTINGS = [
    # (name as written, kind): variants converge, ambiguous ones become possible matches.
    ("Ada Lovelace", "person"),
    ("ADA LOVELACE", "person"),
    ("ada lovelace", "person"),
    ("Grace Hopper", "person"),
    ("Grace Hoper", "person"),
    ("Katarina", "person"),
    ("Katerino", "person"),
    ("Katerina", "person"),
    ("Johnson", "person"),
    ("Jon", "person"),
    ("John", "person"),
    ("Maria", "person"),
    ("Mario", "person"),
    ("SurrealDB", "tool"),
    ("SurealDB", "tool"),
    ("surrealdb", "tool"),
    ("PostgreSQL", "tool"),
    ("Postgres", "tool"),
    ("PostgresQL", "tool"),
    ("Node.js", "tool"),
    ("NodeJS", "tool"),
    ("C++", "tool"),
    ("C#", "tool"),
    ("C", "tool"),
    ("Castellan", "project"),
    ("Castelan", "project"),
    ("Castellum", "project"),
    ("Ada", "other"),
]


def typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) > 5 and w.isalpha()]
    i = rng.choice(candidates)
    word = words[i]
    j = rng.randrange(1, len(word) - 2)
    words[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]  # swap two neighbours
    return " ".join(words)


def variants(text: str, rng: random.Random) -> list[str]:
    roll = rng.random()
    if roll < 0.25:
        return [text]  # an exact repeat: not stored again
    if roll < 0.40:
        return [text.upper()]
    if roll < 0.55:
        return [text.rstrip(".") + "!"]
    if roll < 0.85:
        return [typo(text, rng)]
    return []


Write = tuple[str, str, str, services.WriteMode, str]  # wing, room, content, mode, agent


def demo_plan(rng: random.Random) -> list[Write]:
    """Every write of the demo, in order: facts and their variants, near misses, generated
    facts, reading notes and two agents' diaries. The same plan for the same seed."""
    return [*_fact_writes(rng), *_diary_writes(rng)]


def _fact_writes(rng: random.Random) -> list[Write]:
    memory = services.WriteMode.MEMORY
    plan: list[Write] = []
    for (wing, room), facts in FACTS.items():
        plan += [(wing, room, fact, memory, "") for fact in facts]
        for fact in facts:
            plan += [(wing, room, variant, memory, "") for variant in variants(fact, rng)]
    for (wing, room), facts in NEAR_MISSES.items():
        plan.extend((wing, room, fact, memory, "") for fact in facts)
    for subject in SUBJECTS:
        for verb in VERBS:
            fact = f"{subject} {verb} {rng.choice(OBJECTS)}."
            plan.append(("castellan", "systems", fact, memory, ""))
            if rng.random() < 0.4:
                restated = typo(fact, rng) if len(fact) > 30 else fact
                plan.append(("castellan", "systems", restated, memory, ""))
    triples = [(r, b, t) for r in READERS for b in BOOKS for t in TOPICS]
    for reader, book, topic in rng.sample(triples, 90):
        fact = f"{reader} recommended {book} for {topic}."
        plan.append(("research", "reading", fact, memory, ""))
    return plan


def _diary_writes(rng: random.Random) -> list[Write]:
    diary, room = services.WriteMode.DIARY, services.Destination.DIARY.room
    plan: list[Write] = []
    for agent in ("scout", "scribe"):
        pairs = [(o, a) for o in DIARY_OPENINGS for a in DIARY_ACTIVITIES]
        for opening, activity in rng.sample(pairs, 30):
            entry = f"{opening} {activity}."
            plan.append(("agents", room, entry, diary, agent))
            if rng.random() < 0.15:
                plan.append(("agents", room, entry, diary, agent))
    # The same words in both agents' diaries stay two entries.
    for agent in ("scout", "scribe"):
        plan.append(("agents", room, "Stand-up: nothing blocking today.", diary, agent))
    return plan


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
        if seeded:
            self.stdout.write(
                f"Demo palace: seeded already ({seeded}); nothing written, so your changes "
                "and deletions stand."
            )
            with transaction.atomic():
                _, token = self.curator()
        else:
            with transaction.atomic():
                token = self.seed(no_progress, options["verbosity"])
        self.stdout.write(
            f"Curator login: {DEMO_USER} / {DEMO_PASSWORD}  (the first seed's password, unless "
            "changed since)"
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
        plan = demo_plan(random.Random(2026))
        with progress_bar(
            verbosity, hidden=no_progress, total=len(plan), desc="drawers", unit="drawer"
        ) as bar:
            stored, duplicates, similar, written = self.write(plan, bar.update)
        with progress_bar(
            verbosity, hidden=no_progress, total=len(SIGHTINGS), desc="mentions", unit="name"
        ) as bar:
            mentions = self.mention(written, bar.update)
        _, token = self.curator()
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

    def mention(self, written: list, done: Callable[[], object]) -> int:
        mentions = 0
        for index, (name, kind) in enumerate(SIGHTINGS):
            drawer = written[(index * 7) % len(written)]
            services.mention_add(drawer=drawer, name=name, kind=kind, provenance={"kind": "demo"})
            mentions += 1
            done()
        return mentions

    def curator(self) -> tuple[User, Token]:
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USER, defaults={"is_staff": True})
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        user.groups.add(curators_group())
        # Let the demo curator use the admin over the palace too.
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="palace"))
        token, _ = Token.objects.get_or_create(user=user)
        return user, token
