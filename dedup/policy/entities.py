"""Entity keys and the resolution of a sighted name to a known entity, or to none."""

from __future__ import annotations

import enum
import functools
import unicodedata
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import regex

from dedup.policy.similarity import edit_distance
from dedup.policy.text import fold, without_leading_marks

# Kept: letters, digits, and the symbols that carry meaning in names (C++ is not C, C# is not C).
_KEY_DROPPED = regex.compile(r"[.'\u2019]")
# A letter's marks are its own, as in a normalised text (`dedup.policy.text`).
_KEY_SEPARATOR = regex.compile(
    r"[^\p{Alphabetic}\p{N}\p{M}+#]+(?:\p{M}+[^\p{Alphabetic}\p{N}\p{M}+#]*)*"
)

VAGUE_KIND = "other"
MIN_TYPO_KEY_CHARS = 6
MIN_POSSIBLE_KEY_CHARS = 4

MAX_POSSIBLE = 5
POSSIBLE_SIMILARITY = 0.75
MAX_POSSIBLE_EDITS = 2
KEY_LENGTH_BAND = MAX_POSSIBLE_EDITS


class Rule(enum.StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    ALIAS = "alias"
    TYPO = "typo"
    DISTINCT = "distinct"


CONFIDENCE = {Rule.EXACT: 1.0, Rule.NORMALIZED: 0.98, Rule.ALIAS: 0.95}


@functools.lru_cache(maxsize=4096)  # a resolution keys the name and each alias more than once
def entity_key(name: str) -> str:
    """Fold (NFC, usual widths, casefold: `fold`); keep letters, digits, + and #; drop dots and
    apostrophes; any other run is one space. A name with nothing left keys as its trimmed, folded
    self ("???")."""
    folded = fold(name)
    key = without_leading_marks(_KEY_SEPARATOR.sub(" ", _KEY_DROPPED.sub("", folded)).strip())
    return key or folded.strip()


# A number in a name: digits of any script, a "." or "," inside it kept ("3.12" is not "31.2",
# whose keys are one); any other character between digits separates two numbers ("747-400" is
# "747 400", "2024/25" is "2024-25").
_NAME_NUMBER = regex.compile(r"\d+(?:[.,]\d+)*")
_LEADING_ZEROS = regex.compile(r"^0+(?=\d)")


def name_numbers(name: str) -> list[str]:
    """A name's numbers in order, by value: each digit as its ASCII one (a full-width 2 is 2),
    leading zeros dropped ("01" is 1)."""
    return [
        _LEADING_ZEROS.sub("", "".join(str(unicodedata.decimal(c, c)) for c in number))
        for number in _NAME_NUMBER.findall(name)
    ]


def numbers_agree(a: str, b: str) -> bool:
    """Two names holding the same numbers, in order, by value (`name_numbers`): "Server 1" and
    "Server 2", "db-prod-01" and "db-prod-02", "Python 3.11" and "Python 3.12" are one edit apart
    and never one entity by that alone, nor "Python 3.12" and "Python 31.2", whose keys (dots
    dropped) are one; "db-prod-01" and "db-prod-1", "1-800-Flowers" and "1 800 Flowers" may be.
    Numbers written in words or numerals ("World War II") are letters here."""
    return name_numbers(a) == name_numbers(b)


def key_similarity(a: str, b: str, distance: int | None = None) -> float:
    longer = max(len(a), len(b))
    if longer == 0:
        return 0.0
    if distance is None:
        distance = edit_distance(a, b)
    return (longer - distance) / longer


# What orders entities oldest first: a creation sequence or time, or a tuple of them.
Age: TypeAlias = int | float | tuple[int | float, ...]


@dataclass(frozen=True, slots=True)
class EntityCandidate:
    """A known entity as resolution sees it. `age` orders entities oldest first (a creation
    sequence or time); ties go to the oldest, never to input order. `typo_aliases` are the
    aliases that may serve the typo rule: only those a person recorded."""

    id: Hashable
    name: str
    kind: str
    aliases: Sequence[str] = ()
    age: Age = 0
    key: str = ""
    # The aliases a person recorded (they are among `aliases` too): a typo of one converges, as a
    # typo of the name does. An alias an earlier convergence recorded is never here.
    typo_aliases: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", entity_key(self.name))


@dataclass(frozen=True, slots=True)
class PossibleMatch:
    entity: Hashable
    similarity: float
    distance: int


@dataclass(frozen=True, slots=True)
class Resolution:
    """`entity` is the id converged on, or None for a new, distinct entity."""

    entity: Hashable | None
    rule: Rule
    confidence: float
    possible: tuple[PossibleMatch, ...] = field(default=())


def through_redirect(resolution: Resolution) -> Resolution:
    """The resolution of a sighting that reached its entity through a curator's alias or merge
    (a redirect): by alias, whatever matched the entity it was redirected from."""
    return Resolution(resolution.entity, Rule.ALIAS, CONFIDENCE[Rule.ALIAS], resolution.possible)


def kind_matches(observed: str, known: str) -> bool:
    """A specific kind matches only itself; a vague observation may match any kind."""
    return observed in (VAGUE_KIND, known)


def _preference(observed_kind: str, candidate: EntityCandidate) -> tuple[int, Age]:
    # A vague observation prefers an entity of a specific kind; then the oldest wins.
    vague_penalty = 1 if observed_kind == VAGUE_KIND and candidate.kind == VAGUE_KIND else 0
    return (vague_penalty, candidate.age)


def resolve(
    name: str,
    kind: str,
    candidates: Iterable[EntityCandidate],
    fuzzy: bool,
    *,
    distinct_from: frozenset[Hashable] = frozenset(),
) -> Resolution:
    """Resolve a sighted name, in order: exact name, same key, recorded alias, then (when fuzzy) a
    single unambiguous typo in a key of MIN_TYPO_KEY_CHARS or more, of the name or of an alias
    a person recorded (`EntityCandidate.typo_aliases`). Anything else is distinct, with the
    entities it resembles as possible matches, closest first. A name converges only on a name or
    alias holding the same numbers (`numbers_agree`): one that differs in a number is at most a
    possible match, for a person to judge.

    `distinct_from` holds entities a person has said are not this one; they are never proposed.
    The result does not depend on the order the candidates arrive in.
    """
    key = entity_key(name)
    eligible = [c for c in candidates if kind_matches(kind, c.kind)]

    def best(matches: list[EntityCandidate]) -> EntityCandidate | None:
        return min(matches, key=lambda c: _preference(kind, c), default=None)

    exact = best([c for c in eligible if c.name == name])
    if exact is not None:
        return Resolution(exact.id, Rule.EXACT, CONFIDENCE[Rule.EXACT])
    same_key = best([c for c in eligible if c.key == key and numbers_agree(name, c.name)])
    if same_key is not None:
        return Resolution(same_key.id, Rule.NORMALIZED, CONFIDENCE[Rule.NORMALIZED])
    alias = best(
        [
            c
            for c in eligible
            if any(entity_key(a) == key and numbers_agree(name, a) for a in c.aliases)
        ]
    )
    if alias is not None:
        return Resolution(alias.id, Rule.ALIAS, CONFIDENCE[Rule.ALIAS])
    if not fuzzy:
        return Resolution(None, Rule.DISTINCT, 0.0)
    return _typo_or_distinct(name, kind, eligible, distinct_from)


def _typo_or_distinct(
    name: str,
    kind: str,
    eligible: list[EntityCandidate],
    distinct_from: frozenset[Hashable],
) -> Resolution:
    """The one entity a key is a typo of, or none, with the entities it resembles."""
    # Only the canonical name's key and the aliases a person recorded are compared here: an
    # alias recorded by a convergence may itself have been a typo, and comparing against it
    # would let spellings drift one edit at a time.
    key = entity_key(name)
    close: list[tuple[int, float, EntityCandidate, str]] = []
    for candidate in eligible:
        if candidate.id in distinct_from:
            continue
        nearest = _nearest_key(key, candidate)
        if nearest is not None:
            distance, score, matched = nearest
            close.append((distance, score, candidate, matched))

    one_edit = [
        (c, score, matched)
        for d, score, c, matched in close
        if d == 1 and numbers_agree(name, _spelling(c, matched))
    ]
    if (
        len(one_edit) == 1
        and len(key) >= MIN_TYPO_KEY_CHARS
        and len(one_edit[0][2]) >= MIN_TYPO_KEY_CHARS
    ):
        match, score, _ = one_edit[0]
        return Resolution(match.id, Rule.TYPO, score)

    possible = sorted(
        (
            (distance, score, candidate)
            for distance, score, candidate, matched in close
            if len(key) >= MIN_POSSIBLE_KEY_CHARS
            and len(matched) >= MIN_POSSIBLE_KEY_CHARS
            and score >= POSSIBLE_SIMILARITY
        ),
        key=lambda item: (-item[1], item[0], _preference(kind, item[2])),
    )[:MAX_POSSIBLE]
    return Resolution(
        None,
        Rule.DISTINCT,
        0.0,
        tuple(PossibleMatch(c.id, score, distance) for distance, score, c in possible),
    )


def _nearest_key(key: str, candidate: EntityCandidate) -> tuple[int, float, str] | None:
    """The distance, similarity and key of the candidate's closest key within
    MAX_POSSIBLE_EDITS: its name's, or that of an alias a person recorded. At equal distance
    the higher similarity wins, then the longer key (the length rules read it), then the first
    in code point order: never the order the aliases arrive in (a database returns them in any
    order). None when no key is that close."""
    ranked: list[tuple[int, float, int, str]] = []
    for other in (candidate.key, *(entity_key(alias) for alias in candidate.typo_aliases)):
        if abs(len(other) - len(key)) > MAX_POSSIBLE_EDITS:
            continue
        distance = edit_distance(key, other)
        if distance > MAX_POSSIBLE_EDITS:
            continue
        ranked.append((distance, -key_similarity(key, other, distance), -len(other), other))
    if not ranked:
        return None
    distance, negated_score, _, nearest = min(ranked)
    return distance, -negated_score, nearest


def _spelling(candidate: EntityCandidate, key: str) -> str:
    """The name, or the alias a person recorded, whose key `_nearest_key` matched: its numbers
    as written ("3.12", where the key holds "312")."""
    if candidate.key == key:
        return candidate.name
    return next((a for a in candidate.typo_aliases if entity_key(a) == key), candidate.name)
