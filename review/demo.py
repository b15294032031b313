"""The demo palace's contents: what `seed_demo` writes, and the entity sightings it records on
the drawers that name them."""

from __future__ import annotations

import random

from dedup import services

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

# Entity sightings with spelling variants and ambiguous names, so the entity links and the
# review queue have real work in them. Each is recorded on the drawer that names it as written:
# one of the facts above, or a note below written for it.
NOTES = {
    ("research", "history"): [
        "Ada Lovelace's notes on the Analytical Engine open the history reading list.",
        "REMINDER: ADA LOVELACE DAY TALKS ARE DUE BY THE SECOND TUESDAY OF OCTOBER.",
        "note to self: the ada lovelace quotes for the history talk are in the shared folder.",
        "Grace Hopper's nanosecond wire is the prop for the talk on latency.",
    ],
    ("personal", "team"): [
        "Grace Hoper said the compiler benchmark slides are ready for review.",
        "Katerino booked the big meeting room for the Friday retrospective.",
        "Katerina moved the retrospective to Thursday afternoon.",
        "Jon is on call this week for the ingestion job.",
        "John signed off the backup restore drill after the second run.",
        "Maria owns the quarterly roadmap and chairs the reliability review.",
        "Mario from the payments team asked for read access to the data warehouse.",
    ],
    ("castellan", "tools"): [
        "We evaluated SurrealDB for its graph queries and kept the relational store.",
        "The SurealDB trial ended after the import benchmark.",
        "the surrealdb client was removed from the requirements file.",
        "Postgres 16 has run the staging database since the last upgrade.",
        "The PostgresQL upgrade window is Sunday night between one and three.",
        "The mobile app's build server runs Node.js 20 for the bundler.",
        "NodeJS stays pinned on the build server until the bundler is upgraded.",
        "The fingerprint library is written in C++ with Python bindings.",
        "The billing service's old desktop client is written in C#.",
        "The compression extension is written in C for speed.",
        "The avionics checks of the flight team are still written in Ada.",
    ],
    ("castellan", "decisions"): [
        "Castellan keeps the agents' memories deduplicated and every verdict explained.",
        "The Castelan demo link on the team wiki points at the old staging host.",
        "Castellum was the working name before the project was renamed.",
    ],
}

SIGHTINGS = [
    # (name as written, kind, the drawer naming it): variants converge, ambiguous names become
    # possible matches.
    ("Ada Lovelace", "person", NOTES["research", "history"][0]),
    ("ADA LOVELACE", "person", NOTES["research", "history"][1]),
    ("ada lovelace", "person", NOTES["research", "history"][2]),
    ("Grace Hopper", "person", NOTES["research", "history"][3]),
    ("Grace Hoper", "person", NOTES["personal", "team"][0]),
    ("Katarina", "person", FACTS["personal", "preferences"][2]),
    ("Katerino", "person", NOTES["personal", "team"][1]),
    ("Katerina", "person", NOTES["personal", "team"][2]),
    ("Johnson", "person", FACTS["personal", "preferences"][3]),
    ("Jon", "person", NOTES["personal", "team"][3]),
    ("John", "person", NOTES["personal", "team"][4]),
    ("Maria", "person", NOTES["personal", "team"][5]),
    ("Mario", "person", NOTES["personal", "team"][6]),
    ("SurrealDB", "tool", NOTES["castellan", "tools"][0]),
    ("SurealDB", "tool", NOTES["castellan", "tools"][1]),
    ("surrealdb", "tool", NOTES["castellan", "tools"][2]),
    ("PostgreSQL", "tool", FACTS["castellan", "decisions"][0]),
    ("Postgres", "tool", NOTES["castellan", "tools"][3]),
    ("PostgresQL", "tool", NOTES["castellan", "tools"][4]),
    ("Node.js", "tool", NOTES["castellan", "tools"][5]),
    ("NodeJS", "tool", NOTES["castellan", "tools"][6]),
    ("C++", "tool", NOTES["castellan", "tools"][7]),
    ("C#", "tool", NOTES["castellan", "tools"][8]),
    ("C", "tool", NOTES["castellan", "tools"][9]),
    ("Castellan", "project", NOTES["castellan", "decisions"][0]),
    ("Castelan", "project", NOTES["castellan", "decisions"][1]),
    ("Castellum", "project", NOTES["castellan", "decisions"][2]),
    ("Ada", "other", NOTES["castellan", "tools"][10]),  # the language, not the person
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
    facts, reading notes, two agents' diaries and the notes naming the sightings. The same plan
    for the same seed."""
    memory = services.WriteMode.MEMORY
    notes = [
        (wing, room, note, memory, "") for (wing, room), texts in NOTES.items() for note in texts
    ]
    return [*_fact_writes(rng), *_diary_writes(rng), *notes]


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
