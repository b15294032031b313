"""Shared helpers for the benchmarks: a throwaway database per backend, synthetic text, tables."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/castellan_bench")


def setup_django(database_url: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CASTELLAN_LOG_LEVEL", "WARNING")
    # Production settings (DEBUG off), reached in-process over plain HTTP by the test client.
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-signs-nothing")
    import django

    django.setup()
    from django.conf import settings

    # Pages are rendered without `collectstatic`, so static names are not hashed (as in the tests).
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fresh_database_url(backend: str) -> str:
    if backend == "sqlite":
        path = Path(tempfile.mkdtemp(prefix="castellan-bench-")) / "bench.sqlite3"
        return f"sqlite:///{path}"
    name = PG_URL.rsplit("/", 1)[1]
    admin = PG_URL.rsplit("/", 1)[0] + "/postgres"
    for sql in (f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"'):
        subprocess.run(["psql", admin, "-q", "-c", sql], check=True, capture_output=True)
    return PG_URL


class Vocabulary:
    """Pronounceable made-up words with a Zipf-like frequency, like a real palace's vocabulary.

    As in natural language (Zipf's law of abbreviation), frequent words tend to be short and rare
    words long: ranks are assigned by length, with noise. Without that, length would tell nothing
    about rarity, which real text does not look like.
    """

    SYLLABLES = [
        "ka",
        "lo",
        "ri",
        "men",
        "tas",
        "vor",
        "il",
        "de",
        "nu",
        "sha",
        "pre",
        "ton",
        "gar",
        "bel",
        "qui",
        "mo",
        "sen",
        "tra",
        "ul",
        "fi",
        "zer",
        "ank",
        "po",
        "hel",
    ]

    def __init__(self, rng: random.Random, size: int = 6000):
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choice(self.SYLLABLES) for _ in range(rng.randint(2, 4))))
        # sorted first: a set's order changes with each process's string hashing
        self.words = sorted(sorted(words), key=lambda w: len(w) + rng.uniform(-3, 3))
        self.weights = [1 / (rank + 10) for rank in range(size)]
        self.rng = rng
        self.common = ["the", "and", "for", "with", "was", "that", "from", "our", "we", "to"]

    def sentence(self) -> str:
        count = self.rng.randint(14, 28)
        picks = self.rng.choices(self.words, weights=self.weights, k=count)
        words = [w if self.rng.random() > 0.3 else self.rng.choice(self.common) for w in picks]
        return (" ".join(words)).capitalize() + "."


def sampled(queryset, count: int, rng: random.Random) -> list[tuple[int, str]]:
    """(id, content) of `count` drawers of the queryset picked by `rng`, in the order picked: the
    same drawers for the same seed, where the database's own random order (`order_by("?")`)
    changed the planted variants, and so the recall, from run to run."""
    ids = list(queryset.order_by("pk").values_list("pk", flat=True))
    picked = rng.sample(ids, min(count, len(ids)))
    content = dict(queryset.filter(pk__in=picked).values_list("pk", "content"))
    return [(pk, content[pk]) for pk in picked]


def one_typo(text: str, rng: random.Random) -> str:
    """Swap, drop, or replace one letter inside a word of five letters or more. Always a change:
    swapping two equal neighbours would leave an exact copy, not a typo."""
    while (changed := _one_edit(text, rng)) == text:
        pass
    return changed


def _one_edit(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    eligible = [i for i, w in enumerate(words) if len(w.strip(".")) >= 5]
    i = rng.choice(eligible)
    word = words[i]
    j = rng.randrange(1, len(word.strip(".")) - 2)
    kind = rng.choice(["swap", "drop", "replace"])
    if kind == "swap":
        word = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    elif kind == "drop":
        word = word[:j] + word[j + 1 :]
    else:
        word = word[:j] + ("x" if word[j] != "x" else "y") + word[j + 1 :]
    words[i] = word
    return " ".join(words)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summary(latencies: list[float]) -> dict[str, float]:
    return {
        "per_second": len(latencies) / sum(latencies),
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
    }


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def drawer_row(room, text: str):
    """An unsaved drawer with its derived columns, for bulk loads that skip the write path."""
    from dedup import policy
    from palace.models import Drawer

    derived = policy.Text.of(text)
    return Drawer(
        room=room,
        content=text,
        content_hash=derived.content_hash,
        normalized_content=derived.normalized,
        index_text=policy.index_text(derived.normalized),
        fingerprint=derived.fingerprint,
    )


def fill(room, vocabulary: Vocabulary, count: int) -> None:
    """Grow the room with plain bulk inserts (derived columns filled, indexes live)."""
    from palace.models import Drawer

    for start in range(0, count, 2000):
        rows = [drawer_row(room, vocabulary.sentence()) for _ in range(min(2000, count - start))]
        Drawer.objects.bulk_create(rows)


def settle() -> None:
    """After a bulk load, what `manage.py dedup_maintain` does (and autovacuum would do on
    PostgreSQL before long): the indexes in their steady state."""
    from dedup.maintenance import optimize_candidate_indexes

    optimize_candidate_indexes()


def request_end() -> float:
    """What the end of a request (or of a task) does to the database connection, called after
    each timed call and not timed with it: on SQLite, the write-ahead log's checkpoint when one
    is due (`config/sqlite3`), which the response has gone before. Its time, in seconds."""
    from django.db import connection

    checkpoint = getattr(connection, "checkpoint_if_due", None)  # the app's SQLite backend
    started = time.perf_counter()
    if checkpoint is not None:
        checkpoint()
    return time.perf_counter() - started


def arguments(
    doc: str, *, sizes: str, texts: dict[str, str] | None = None, **options: int
) -> argparse.Namespace:
    """A benchmark's command line: --sizes (comma-separated, parsed to ints), --backends, an
    integer option per keyword with its default, a text option (empty by default) per item of
    `texts` with its help, and the hidden --child a backend's process is run with."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--backends", default="sqlite,postgresql")
    for name, default in options.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    for name, help_text in (texts or {}).items():
        parser.add_argument(f"--{name}", default="", help=help_text)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    parsed.sizes = [int(size) for size in parsed.sizes.split(",")]
    return parsed


def store_arguments(
    doc: str, *, writes: int, texts: dict[str, str] | None = None, **options: int
) -> argparse.Namespace:
    """The command line of an experiment on one store of --size drawers over --rooms rooms (the
    raw-SQLite designs weighed for issue 14): --writes, an integer option per keyword with its
    default, a text option per item of `texts` with its default, and the hidden --child a
    design's process is run with when each runs apart."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--writes", type=int, default=writes)
    for name, default in options.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    for name, default_text in (texts or {}).items():
        parser.add_argument(f"--{name}", default=default_text)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args()


def run_children(script: str, backends: str, separator: str = ","):
    """Run the benchmark once per backend (or other item of the `separator`-separated list),
    each in its own process (settings are read once per process) given this process's command
    line, and yield the JSON rows each prints."""
    import json

    for backend in backends.split(separator):
        print(f"running {backend} ...", file=sys.stderr, flush=True)
        process = subprocess.run(
            [sys.executable, script, *sys.argv[1:], "--child", backend],
            capture_output=True,
            text=True,
        )
        if process.returncode != 0:
            sys.exit(process.stderr)
        if os.environ.get("BENCH_DEBUG"):
            print(process.stderr, file=sys.stderr)
        for line in process.stdout.splitlines():
            yield json.loads(line)


def sentences(vocabulary: Vocabulary, count: int):
    """`count` sentences, the very ones `vocabulary.sentence()` would give, with the word weights
    summed once instead of once a sentence (a million-row fill's hot loop)."""
    import itertools

    rng, words, common = vocabulary.rng, vocabulary.words, vocabulary.common
    cumulative = list(itertools.accumulate(vocabulary.weights))
    for _ in range(count):
        picks = rng.choices(words, cum_weights=cumulative, k=rng.randint(14, 28))
        chosen = [w if rng.random() > 0.3 else rng.choice(common) for w in picks]
        yield (" ".join(chosen)).capitalize() + "."


BULK_COLUMNS = (
    "uuid",
    "room_id",
    "content",
    "content_hash",
    "normalized_content",
    "index_text",
    "fingerprint",
    "name",
    "kind",
    "agent",
    "source",
    "valid_from",
    "valid_to",
    "superseded_by_id",
    "consolidation",
    "created_at",
)


def bulk_drawers(room_id: int, texts, *, transaction_rows: int = 50_000) -> list[int]:
    """Store `texts` as drawers of the room exactly as the write path does with deduplication
    off (the derived columns; on SQLite the FTS5 rows, by its triggers; on PostgreSQL the GIN
    entries), in big transactions: COPY on PostgreSQL, executemany on SQLite. Returns the new
    ids in the order of `texts` (one writer: ids are handed out in insert order)."""
    import uuid as uuid_module

    from django.db import connection, transaction
    from django.utils import timezone

    from dedup import policy
    from palace.models import Drawer

    columns = [str(f.column) for f in Drawer._meta.local_concrete_fields if not f.primary_key]
    assert sorted(columns) == sorted(BULK_COLUMNS), columns  # a new column: fill it here
    uuid_field = Drawer._meta.get_field("uuid")
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    newest = Drawer.objects.filter(room_id=room_id).order_by("-id").values_list("id", flat=True)
    after = newest.first() or 0

    def row(text: str) -> tuple:
        derived = policy.Text.of(text)
        public_id = uuid_field.get_db_prep_value(uuid_module.uuid4(), connection)
        return (
            *(public_id, room_id, text, derived.content_hash),
            *(derived.normalized, policy.index_text(derived.normalized)),
            *(derived.fingerprint, None, "", "", "{}"),
            *(now, None, None, "{}", now),
        )

    pending = iter(texts)
    while chunk := [row(text) for _, text in zip(range(transaction_rows), pending, strict=False)]:
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                copy_sql = f"COPY palace_drawer ({', '.join(BULK_COLUMNS)}) FROM STDIN"
                with cursor.cursor.copy(copy_sql) as copy:
                    for values in chunk:
                        copy.write_row(values)
            else:
                marks = ", ".join(["%s"] * len(BULK_COLUMNS))
                cursor.executemany(
                    f"INSERT INTO palace_drawer ({', '.join(BULK_COLUMNS)}) VALUES ({marks})",
                    chunk,
                )
    ids = Drawer.objects.filter(room_id=room_id, pk__gt=after).order_by("pk")
    return list(ids.values_list("pk", flat=True))
