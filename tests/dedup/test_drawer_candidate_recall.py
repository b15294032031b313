"""Recall on realistic corruption (bench/recall.py): the corruption of a variant sits in its
longest words, which were every word pair a write asked, so each kind below once broke all of
them. A write now also asks pairs of the words seen in the room's sample, which the corruption
left intact, and links the original."""

import re

import pytest

from dedup import candidates, policy, services
from dedup.candidates import room_words
from tests.dedup.drawers_data import bulk_drawers

pytestmark = pytest.mark.django_db

# Ten long names, longest first, longer than any other word of the original: by length alone,
# every pair, each of the five longest with one of the five others.
NAMES = [
    "Wolverhamptonshire",
    "Trondheimsfjorden",
    "Westerlundgaarden",
    "Marseillesharbour",
    "Oberammergauerin",
    "Kristiansandberg",
    "Valparaisoquinta",
    "Ljubljanicaplatz",
    "Bratislavanesque",
    "Copenhagenhavnen",
]
# Words each in a few other drawers of the room: real words, seen in its sample.
REAL = ["harbor", "ledger", "copper", "timber", "signal", "lantern", "anchor", "quarry"]
ORIGINAL = (
    f"Shift log: {' '.join(NAMES)} visited; the harbor crew logged the copper ledger, "
    "timber signal and lantern by the anchor quarry, checked at night."
)


def filler(n: int) -> str:
    """A drawer of the room, holding one of the real words when `n` is small."""
    real = f" near the {REAL[n % len(REAL)]}" if n < 3 * len(REAL) else ""
    return f"Shift log {n:04d}: pressure nominal at station {n % 13}{real}, checked at night."


def swap(word: str) -> str:  # a keyboard typo: two neighbours swapped
    return word[:4] + word[5] + word[4] + word[6:]


def ocr(word: str) -> str:  # an OCR misreading: l read as 1, o as 0, e as c
    return re.sub("[loe]", lambda m: {"l": "1", "o": "0", "e": "c"}[m.group()], word, count=1)


def each_of_the_longest(text: str, change) -> str:
    """`text` with `change` made to each of the five longest names."""
    for name in NAMES[:5]:
        text = text.replace(name, change(name))
    return text


VARIANTS = {
    "keyboard": each_of_the_longest(ORIGINAL, swap),
    "ocr": each_of_the_longest(ORIGINAL, lambda w: ocr(w[:5]) + w[5:]),
    "join": ORIGINAL.replace(
        " ".join(NAMES), " ".join(a + b for a, b in zip(NAMES[::2], NAMES[1::2], strict=True))
    ),
    "split": each_of_the_longest(ORIGINAL, lambda w: f"{w[:8]} {w[8:]}"),
    "abbreviation": each_of_the_longest(ORIGINAL, lambda w: swap(w[:14]) + "."),
}


@pytest.fixture
def room(dedup_settings):
    room = services.room_get_or_create(wing="ops", room="shift-log")
    original = services.drawer_write(room=room, content=ORIGINAL).drawer
    bulk_drawers(room, [filler(n) for n in range(room_words.MIN_SAMPLE_DRAWERS)])
    room_words.forget()  # the next sample, as after REFRESH_WRITES writes
    room.original_id = original.id
    return room


def linked(room, variant: str) -> set[int]:
    return {link.older_id for link in services.drawer_write(room=room, content=variant).links}


def old_pairs(room_id, words, groups, **options):
    """The pairs asked before: the room's common words last, then the longest first."""
    return candidates.lexical_groups(candidates.rare_first(room_id, words), groups)


@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_a_variant_the_longest_words_missed_finds_its_original(room, kind):
    text = policy.Text.of(VARIANTS[kind])
    assert policy.assess(text, policy.Text.of(ORIGINAL), threshold=0.9).verdict is not None
    assert room.original_id in linked(room, VARIANTS[kind])


@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_the_longest_words_alone_missed_it(room, kind, monkeypatch):
    monkeypatch.setattr(candidates, "query_groups", old_pairs)
    assert room.original_id not in linked(room, VARIANTS[kind])


def test_pairs_of_seen_words_come_rarest_first_and_apart_from_unseen_ones(room):
    words = policy.query_words(VARIANTS["keyboard"])
    groups = candidates.query_groups(room.id, words, candidates.LEXICAL_GROUPS)
    seen = groups[-room_words.SEEN_GROUPS :]
    assert all(set(pair) <= set(REAL) for pair in seen)
    unseen = groups[: -room_words.SEEN_GROUPS]
    assert all(not set(group) & set(REAL) for group in unseen)


def test_a_room_too_small_to_sample_asks_the_longest_words(dedup_settings):
    room = services.room_get_or_create(wing="ops", room="small")
    words = policy.query_words(ORIGINAL)
    groups = candidates.query_groups(room.id, words, candidates.LEXICAL_GROUPS)
    assert groups == candidates.lexical_groups(words)
