"""The words common to a room (its template words: a form's headings, a report's boilerplate),
which a lexical query asks after the room's rarer words.

A lexical query's word groups find a variant's original only when they are rare in the room: a
pair of template words matches the whole room. Word length, the free guess at rarity, fails there
(template words are long), and neither full-text index offers a cheap document frequency per
room. So the room's newest drawers are sampled now and then, and the words in more than
COMMON_SHARE of them are the room's common words. The sample also tells which of a text's words
are real words of the room (`query_groups`): a variant's corruption makes words no drawer holds.
Only the choice of the query words changes: the policy still decides every link.

The sample is kept per process, per room, for REFRESH_WRITES lookups or REFRESH_SECONDS, whichever
ends first: a few milliseconds per thousand writes (a bulk load, which bypasses the write path,
shows in the next sample). It is a hint, so a stale one costs recall at
worst, never a wrong link.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence

from dedup import policy
from dedup.candidates.drawers import (
    GROUP_MATCHES,
    STOP_WORDS,
    lexical_groups,
    lexical_words,
    words_in_room,
)
from dedup.candidates.room_sample import Sample
from palace.models import Drawer

SAMPLE_DRAWERS = 1000
MIN_SAMPLE_DRAWERS = 200  # fewer: too few to tell, and a small room's lookups are cheap anyway
COMMON_SHARE = 0.02
REFRESH_WRITES = 1000
REFRESH_SECONDS = 600.0
SAMPLED_CHARACTERS = 2000  # of each drawer: a room's template is at its start or its end

# A word in at least SEEN_DRAWERS drawers of the sample is a real word of the room: a typo, two
# words run together or a split word rarely makes one. Pairs of such words (SEEN_GROUPS of the
# query's groups, their rarest first) survive any corruption of the other words.
SEEN_DRAWERS = 2
SEEN_GROUPS = 2
CACHED_ROOMS = 256  # rooms whose sample a process keeps (the least recently sampled go first)

# A group's lookup reads every match in the room before it keeps the GROUP_MATCHES newest (PG
# reads each match's row; SQLite each word's doclist): a pair of a big room's frequent words read
# 38,289 matches, 1.5 s cold, in one room of 1M. The sample estimates a group's matches in the room
# (`Sample.matches`): seen words are grouped side by side, rarest first, two at a time or more
# (up to MAX_GROUP_WORDS) while a group is estimated at GROUP_BUDGET matches or more; a group
# estimated at SKIPPED_MATCHES or more then takes the seen words that no group under the budget
# holds (seen words are the ones corruption leaves intact), and if still estimated at
# SKIPPED_MATCHES or more is not asked: it would fill the bound, and its newest matches are almost
# never the original in a room that big (bench/write_path.py).
GROUP_BUDGET = GROUP_MATCHES // 2
SKIPPED_MATCHES = 4 * GROUP_MATCHES
MAX_GROUP_WORDS = 4
# Words in at least this many sampled drawers keep which ones (a bit mask), so a group of them is
# estimated by the drawers holding all its words, not as if words were independent (template
# words come together).
MASKED_DRAWERS = 8
# From this many drawers in the room, its common words only narrow a rarer word's group, or make
# the last resort (`query_groups`). Below it they are asked in groups of their own, last: in a
# room of 20,000 (bench/recall.py), leaving them out lost recall on realistic corruption (99.1%
# of the pairs within reach against 99.7%).
COMMON_WORDS_LEFT_OUT = 100_000
# There, too, a query asks this many groups fewer than it is given: its groups hold only words
# some drawer of the room holds (`words_in_room`), and in a room of 200,000 (bench/recall.py)
# four found the same pairs as five, on both databases (99.6% and 99.8% of those within reach).
BIG_ROOM_GROUPS_SAVED = 1
# The words a big room's writes found held (`_absent`), kept beside its sample and
# dropped with it, so a word is asked of the index once a sample: a word the sample missed may
# be in thousands of drawers (past the sampled characters, or in older drawers), and on
# PostgreSQL its lookup reads all their postings. A word stays held until its drawers are
# deleted, and keeping one the room no longer holds costs a lookup, never a link.
HELD_WORDS_CACHED = 20_000  # a room's, at most


_lock = threading.Lock()
_samples: dict[int, tuple[float, int, Sample]] = {}
_held: dict[int, set[str]] = {}
# What `sample` reads for a room not cached: made once, not at every write (a Sample's
# construction derives its common words' lengths and pieces).
_NOT_CACHED = (0.0, 0, Sample())


def sample(room_id: int) -> Sample:
    """The room's sample, at most REFRESH_WRITES lookups or REFRESH_SECONDS old."""
    now = time.monotonic()
    with _lock:
        expires, lookups_left, found = _samples.get(room_id, _NOT_CACHED)
        if expires > now and lookups_left > 0:
            _samples[room_id] = (expires, lookups_left - 1, found)
            return found
    found, sampled = _sample(room_id)
    # A room too small to tell is sampled again once its writes could have made it big enough.
    lookups = REFRESH_WRITES if sampled >= MIN_SAMPLE_DRAWERS else MIN_SAMPLE_DRAWERS - sampled - 1
    with _lock:
        _samples.pop(room_id, None)
        _held.pop(room_id, None)
        while len(_samples) >= CACHED_ROOMS:
            _held.pop(oldest := next(iter(_samples)), None)
            del _samples[oldest]
        _samples[room_id] = (now + REFRESH_SECONDS, lookups, found)
    return found


def peek(room_id: int) -> Sample | None:
    """The room's cached sample, if any, without counting a lookup or sampling (for reports)."""
    with _lock:
        cached = _samples.get(room_id)
    return cached[2] if cached is not None else None


def common_words(room_id: int) -> frozenset[str]:
    """The room's common words (see `sample`)."""
    return sample(room_id).common


def rare_first(room_id: int, words: Sequence[str]) -> list[str]:
    """`words` with the room's common ones moved to the end, each part in its given order."""
    common = common_words(room_id)
    if not common:
        return list(words)
    return [w for w in words if w not in common] + [w for w in words if w in common]


def query_groups(
    room_id: int,
    words: Sequence[str],
    groups: int,
    *,
    lock: int | None = None,
    absent: Collection[str] | None = None,
    holders: int = 1,
) -> list[list[str]]:
    """At most `groups` word groups for a lexical query of `words` (longest first).

    The longest words are a variant's rarest, and also where its corruption is: typos, two words
    run together, a word split in two all make words no drawer holds, and a group holding one
    matches nothing. A word seen in the room's sample is one the corruption left intact, so
    SEEN_GROUPS groups (more when the text has few unseen words) are pairs of seen words, the
    rarest in the sample first, side by side (two template words, the room's commonest, come
    last and only when nothing else is left); the others are `lexical_groups` of the unseen
    words, longest first. A room too small to sample gets `lexical_groups` of all its words.

    In a room of COMMON_WORDS_LEFT_OUT drawers or more, its common words only narrow the groups
    `_covering_groups` adds (or make its last resort, when a typo in one word would leave no
    selective group), and an unseen word that looks like a corruption of one of them
    (`Sample.corrupts_common`) is asked only if the text has no other unseen word and no pair of
    seen words: in a room of 200,000 drawers repeating four template words (bench/recall.py),
    the corruptions of those words had taken the unseen words' groups from the real rare words.
    And there, an unseen word is asked only if `holders` drawers of the room hold it (a sweep's
    2, its text's own drawer being one): the index is asked (`words_in_room`, after `lock`),
    unless the words held by fewer are given (`absent`: a sweep's batch's,
    `sweep_batch.words_absent`); and it asks BIG_ROOM_GROUPS_SAVED groups fewer than `groups`
    (at least one)."""
    found = sample(room_id)
    chosen = lexical_words(words)
    unseen = [w for w in chosen if w not in found.seen]
    seen = sorted((w for w in chosen if w in found.seen), key=found.seen.__getitem__)
    big = found.drawers >= COMMON_WORDS_LEFT_OUT
    common: list[str] = []
    suspect: list[str] = []
    if big:
        groups = max(min(groups, 1), groups - BIG_ROOM_GROUPS_SAVED)
        if absent is None:
            absent = _absent(room_id, found, unseen, lock, holders)
        unseen, suspect, seen, common = _big_room_words(found, unseen, seen, absent)
    seen_pairs = _seen_groups(found, seen)
    if not unseen and not seen_pairs:
        unseen, suspect = suspect, []
    free = groups - min(SEEN_GROUPS, len(seen_pairs))
    unseen_groups = lexical_groups(unseen, free) if free > 0 else []
    chosen_groups = unseen_groups + seen_pairs[: groups - len(unseen_groups)]
    bounded = _bounded(found, chosen_groups, seen)
    if big:
        rarer = [*unseen, *seen, *suspect]
        bounded += _covering_groups(found, bounded, rarer, common, groups - len(bounded))
    return bounded


def _absent(
    room_id: int, found: Sample, unseen: list[str], lock: int | None, holders: int
) -> set[str]:
    """Of the `unseen` words, those fewer than `holders` drawers of the room hold. The sample,
    a thousand of the room's drawers, knows few of its rare words: the unseen words are the
    text's rare words and its corruptions alike. The index tells them apart (`words_in_room`):
    a word no drawer of the room holds is a corruption or a new word, and a group holding it
    matches nothing. For a write (one holder), a word in one sampled drawer is held and is not
    asked, nor is one an earlier write found held (HELD_WORDS_CACHED): one room of 1,000,000
    on PostgreSQL, 1.2 words asked a write instead of 2.9 (a word in 700 of its drawers is in
    none of the sample's half the time, and its lookup reads its 700 postings)."""
    if holders != 1:
        return set(unseen) - words_in_room(room_id, unseen, lock=lock, holders=holders)
    with _lock:
        known = _held.get(room_id, set())
        asked = [w for w in unseen if w not in found.once and w not in known]
    held = words_in_room(room_id, asked, lock=lock)
    if held:
        with _lock:
            if room_id in _samples:  # cached beside its sample only
                known = _held.setdefault(room_id, set())
                if len(known) < HELD_WORDS_CACHED:
                    known.update(held)
    return set(asked) - held


def _big_room_words(
    found: Sample, unseen: list[str], seen: list[str], absent: Collection[str]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """In a room of COMMON_WORDS_LEFT_OUT drawers or more: the unseen words not `absent`, those
    of them that look like corruptions of the room's common words, the seen words that are not
    common, and the common ones (see `query_groups`)."""
    unseen = [w for w in unseen if w not in absent]
    # A word one edit from a common word, or a piece of one, or one run together with another:
    # a corruption of the template, where its original is in nearly every drawer. Held by some
    # drawer now (earlier variants store their corruptions), yet a group holding it finds those
    # at best. Asked only if nothing else is.
    suspect = [w for w in unseen if found.corrupts_common(w)]
    # In a room this big, a group is made of common words alone only as the last resort: a
    # lookup reads each word's postings, and a group of three or four frequent words, rare
    # together, cost 10 to 35 ms on SQLite in one room of 1M (each word's doclist is a fifth of
    # the store's) against 0.3 to 1 ms for rarer. Otherwise they only narrow a rarer word's
    # group (`_covering_groups`).
    common = [w for w in seen if w in found.common]
    return (
        [w for w in unseen if w not in suspect],
        suspect,
        [w for w in seen if w not in found.common],
        common,
    )


def _seen_groups(found: Sample, seen: list[str]) -> list[list[str]]:
    """The seen words (rarest first) side by side in groups of two, or more while a group is
    estimated at GROUP_BUDGET matches or more (see above)."""
    groups: list[list[str]] = []
    group: list[str] = []
    for word in seen:
        group.append(word)
        if len(group) >= MAX_GROUP_WORDS or (
            len(group) >= 2 and found.matches(group) < GROUP_BUDGET
        ):
            groups.append(group)
            group = []
    return [*groups, group] if len(group) >= 2 else groups


def _bounded(found: Sample, groups: list[list[str]], seen: list[str]) -> list[list[str]]:
    """`groups`, without those estimated at SKIPPED_MATCHES or more once they have taken the
    rarest seen words that no group under GROUP_BUDGET holds (up to MAX_GROUP_WORDS words)."""
    estimates = [found.matches(group) for group in groups]  # each estimated once
    held = {
        word
        for group, estimate in zip(groups, estimates, strict=True)
        if estimate < GROUP_BUDGET
        for word in group
    }
    spare = [word for word in seen if word not in held]
    bounded = []
    for group, estimate in zip(groups, estimates, strict=True):
        group = list(group)
        extra = [word for word in spare if word not in group]
        # A word alone estimated to fill its bound finds its original only by chance: it takes
        # a seen word too (realistic variants in a room of 200,000: 98.9% to 99.1% of their
        # originals among the candidates, README's Recall on realistic corruption).
        while (
            extra
            and len(group) < MAX_GROUP_WORDS
            and estimate >= (GROUP_MATCHES if len(group) == 1 else SKIPPED_MATCHES)
        ):
            group.append(extra.pop(0))
            spare.remove(group[-1])
            estimate = found.matches(group)
        if estimate < SKIPPED_MATCHES:
            bounded.append(group)
    return bounded


def _covering_groups(
    found: Sample, groups: list[list[str]], rarer: list[str], common: list[str], limit: int
) -> list[list[str]]:
    """At most `limit` groups more, so that whichever one word of the text a corruption breaks,
    a selective group (estimated under GROUP_MATCHES) is left without it. For each word that
    every selective group holds (all the `rarer` words when none is selective; unseen ones
    first, as a corruption makes those), one group without it: a `rarer` word (the unseen
    longest first, then the seen rarest first), narrowed by the next ones and then by the
    text's `common` words of the room (rarest first) while it is estimated at GROUP_BUDGET or
    more, up to MAX_GROUP_WORDS (so up to three common words); one still at GROUP_MATCHES or
    more is not asked.

    In a big room, a text with few words rarer than the room's common ones may get one
    selective group, or none (a rarer word alone can match hundreds of drawers): a typo in that
    group's words left the original to no group at all (bench/write_path.py, one room of 1M: 1
    to 4 of 500 one-typo variants missed). The common words it also holds find it. Held with a
    rarer word, one or two common words cost a lookup 0.45 to 1.3 ms there on SQLite (0.15 to
    0.6 for a pair of rarer words; three common words alone, 2.8 ms, and 10 to 35 for some), so
    a group starts with a rarer word while the text has one the corruption may have left. Few
    texts get any: 35 of 1,200 in that room.

    The last resort: when some rarer word is in every selective group, or no group is
    selective (typically a text with one rarer word, or none the room holds: new words or
    corruptions), one group of its common words alone, the rarest first, narrowed the same way.
    In one room of 1,000,000, of 48,000 one-typo variants, 15 found no original without it and
    4 with it; 0.3% of the texts get one, at up to 9 ms more there, though such a group may cost
    the 10 to 35 ms above (README: Performance, The last resort).

    The estimates take a word the sample holds in fewer than MASKED_DRAWERS drawers as
    independent of the common words: a group they narrow may match more than estimated (a
    lookup still keeps at most GROUP_MATCHES)."""
    selective = [set(group) for group in groups if found.matches(group) < GROUP_MATCHES]
    shared = set.intersection(*selective) if selective else set(rarer)
    added: list[list[str]] = []
    for broken in (word for word in rarer if word in shared):  # the unseen ones first
        if len(added) >= limit:
            break
        if any(broken not in group for group in selective):
            continue  # a group added for another word already leaves this one out
        words = [w for w in [*rarer, *common] if w != broken]
        if not words or words[0] in found.common:
            continue  # no rarer word left to hold the group: the last resort's, below
        if group := _narrowed(found, words):
            added.append(group)
            selective.append(set(group))
    # No selective group at all (a text with one rarer word, the others common or held by no
    # drawer of the room, or rarer words no narrowing made selective without one another):
    # one holding the first rarer word, narrowed, may still be asked.
    if not selective and rarer and limit > 0 and (group := _narrowed(found, [*rarer, *common])):
        added.append(group)
        selective.append(set(group))
    # The last resort: a rarer word every selective group holds, or none selective at all.
    uncovered = not selective or any(all(w in group for group in selective) for w in rarer)
    if uncovered and common and len(added) < limit and (group := _narrowed(found, common)):
        added.append(group)
    return added


def _narrowed(found: Sample, words: list[str]) -> list[str] | None:
    """The first of `words` narrowed by the next ones while estimated at GROUP_BUDGET or more
    (up to MAX_GROUP_WORDS), if then estimated under GROUP_MATCHES."""
    group = [words[0]]
    estimate = found.matches(group)
    for word in words[1:]:
        if len(group) >= MAX_GROUP_WORDS or estimate < GROUP_BUDGET:
            break
        group.append(word)
        estimate = found.matches(group)
    return group if estimate < GROUP_MATCHES else None


def forget() -> None:
    """Drop every sample (tests, whose rooms' ids are reused after a rollback)."""
    with _lock:
        _samples.clear()
        _held.clear()


def _sample(room_id: int) -> tuple[Sample, int]:
    rows = (
        Drawer.objects.filter(room_id=room_id, valid_to__isnull=True)
        .order_by("-id")
        .values_list("index_text", "normalized_content")[:SAMPLE_DRAWERS]
    )
    texts = [(indexed or normalized, len(normalized)) for indexed, normalized in rows]
    if len(texts) < MIN_SAMPLE_DRAWERS:
        return Sample(), len(texts)
    counts: Counter[str] = Counter()
    holders: dict[str, int] = {}
    for position, (text, length) in enumerate(texts):  # the words a drawer is indexed by
        # As much of an index text as SAMPLED_CHARACTERS of the text: its pairs of characters
        # (Chinese, Korean...) make it two to five times as long.
        cut = SAMPLED_CHARACTERS * len(text) // max(length, 1)
        sampled = text[:cut]
        if len(text) > cut and text[cut] != " ":
            sampled = sampled.rsplit(" ", 1)[0]  # the last word, cut, is not a word of the room
        # Only words a query may ask: not the pairs of characters an index text holds.
        words = {word for word in sampled.split(" ") if policy.is_query_word(word)}
        counts.update(words)
        bit = 1 << position
        for word in words:
            holders[word] = holders.get(word, 0) | bit
    least = COMMON_SHARE * len(texts)
    common = frozenset(word for word, count in counts.items() if count > least)
    seen = {word: count for word, count in counts.items() if count >= SEEN_DRAWERS}
    masks = {word: holders[word] for word, count in seen.items() if count >= MASKED_DRAWERS}
    drawers = len(texts)
    if drawers == SAMPLE_DRAWERS:  # a bigger room: counted once a sample
        drawers = Drawer.objects.filter(room_id=room_id, valid_to__isnull=True).count()
    once: frozenset[str] = frozenset()
    if drawers >= COMMON_WORDS_LEFT_OUT:  # only words a query may ask (a few MB a room)
        once = frozenset(
            word for word, count in counts.items() if count == 1 and word not in STOP_WORDS
        )
    return Sample(common, seen, len(texts), drawers, masks, once), len(texts)
