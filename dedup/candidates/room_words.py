"""The words common to a room (its template words: a form's headings, a report's boilerplate),
which a lexical query asks after the room's rarer words.

A lexical query's word groups find a variant's original only when they are rare in the room: a
pair of template words matches the whole room. Word length, the free guess at rarity, fails there
(template words are long), and neither full-text index offers a cheap document frequency per
room. So the room's newest drawers are sampled now and then, and the words in more than
COMMON_SHARE of them are the room's common words. Only the order of the query words changes
(common ones last, never dropped): the policy still decides every link.

The sample is kept per process, per room, for REFRESH_WRITES lookups or REFRESH_SECONDS, whichever
ends first: a few milliseconds per thousand writes (a bulk load, which bypasses the write path,
shows in the next sample). It is a hint, so a stale one costs recall at
worst, never a wrong link.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence

from palace.models import Drawer

SAMPLE_DRAWERS = 1000
MIN_SAMPLE_DRAWERS = 200  # fewer: too few to tell, and a small room's lookups are cheap anyway
COMMON_SHARE = 0.02
REFRESH_WRITES = 1000
REFRESH_SECONDS = 600.0
SAMPLED_CHARACTERS = 2000  # of each drawer: a room's template is at its start or its end

_lock = threading.Lock()
_samples: dict[int, tuple[float, int, frozenset[str]]] = {}


def common_words(room_id: int) -> frozenset[str]:
    """The room's common words, from a sample at most REFRESH_WRITES lookups or REFRESH_SECONDS
    old."""
    now = time.monotonic()
    with _lock:
        expires, lookups_left, words = _samples.get(room_id, (0.0, 0, frozenset()))
        if expires > now and lookups_left > 0:
            _samples[room_id] = (expires, lookups_left - 1, words)
            return words
    words, sampled = _sample(room_id)
    # A room too small to tell is sampled again once its writes could have made it big enough.
    lookups = REFRESH_WRITES if sampled >= MIN_SAMPLE_DRAWERS else MIN_SAMPLE_DRAWERS - sampled - 1
    with _lock:
        _samples[room_id] = (now + REFRESH_SECONDS, lookups, words)
    return words


def rare_first(room_id: int, words: Sequence[str]) -> list[str]:
    """`words` with the room's common ones moved to the end, each part in its given order."""
    common = common_words(room_id)
    if not common:
        return list(words)
    return [w for w in words if w not in common] + [w for w in words if w in common]


def forget() -> None:
    """Drop every sample (tests, whose rooms' ids are reused after a rollback)."""
    with _lock:
        _samples.clear()


def _sample(room_id: int) -> tuple[frozenset[str], int]:
    texts = list(
        Drawer.objects.filter(room_id=room_id, valid_to__isnull=True)
        .order_by("-id")
        .values_list("normalized_content", flat=True)[:SAMPLE_DRAWERS]
    )
    if len(texts) < MIN_SAMPLE_DRAWERS:
        return frozenset(), len(texts)
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(text[:SAMPLED_CHARACTERS].split(" ")))
    least = COMMON_SHARE * len(texts)
    return frozenset(word for word, count in counts.items() if count > least), len(texts)
