"""Signatures of entity keys: two keys within MAX_POSSIBLE_EDITS (OSA) of each other always
share one (but for the length it carries), so an index of them finds every key a name might be
a typo of, or resemble.

This is a deletion neighbourhood (symmetric delete, as in SymSpell), partitioned for long keys:

- A short key (SHORT_KEY_CHARS or fewer) is stored as its variants with up to two deletions
  ("F"). Each OSA edit - substitution, insertion, deletion, adjacent swap - is undone by at most
  one deletion on each side (a swap "xy"/"yx" by deleting "x" from both), so two keys within two
  edits have a variant in common: the name's with d deletions and the stored key's with e,
  where d - e is the name's length less the stored key's. A shared variant that is not empty
  stays shared with one more character deleted on each side, so a lookup asks, of the name's
  variants, only those with, for each stored length in reach, the most deletions that length
  allows (for a name of 7, those with two: 21 variants, not 29).
- A long key of length n is cut at n // 2 into a left and a right piece, each stored as its
  variants with up to one deletion, tagged with the side. A lookup asks what the name would
  store itself: its own two pieces, cut at its own length L the same way, with up to one
  deletion each. That finds every long key within two edits, whatever its length n (L - 2 to
  L + 2), because one side's pieces are within one deletion each, that is, their indel distance
  is at most 2 (the pieces' sizes differ by at most one, so a distance of 2 is one deletion a
  side, and of 1 the longer piece's). Split an alignment of the two keys at the stored cut and
  charge each edit to its side: a substitution or a swap 2, an insertion or a deletion 1; a swap
  across the cut is an insertion on one side and a deletion on the other, the split put just
  before or just after it, whichever suits. The name's cut lies s characters from where the
  split falls in it, which costs each side at most |s| more: s is the left side's net change in
  length less half the whole's (rounded as the cuts are), 0 when both sides change alike, else
  at most 1 either way for a suitable split of a swap across the cut (put the wrong way beside
  an insertion on its side, it makes 2). Case by case (one edit is two with one missing): both
  edits on one side leave the other side 0 + 1 at most; an insertion or deletion on each side,
  1 + 0 if they change the length alike, 1 + 1 if not; a substitution or swap against an
  insertion or deletion, the latter's side 1 + 1 at most; a substitution or swap on each side, s
  is 0 and either side is 2; a swap across the cut and another edit, the side the other edit is
  not on 1 + 1 at most, the swap's split put to keep |s| at 1 or less. Each case leaves one
  side's pieces within an indel distance of 2. (The lookup before asked the pieces at every
  stored length's cut, n // 2 for n from L - 2 to L + 2: 62 signatures for a key of 20 rather
  than 22; dedup/0011's, those one character either side of each cut too: 102.)

Which rule meets which: a stored short key (7 or fewer) is reached by the name's "F" variants,
which a name asks up to nine characters; a stored long key by the name's pieces, which a name
asks from six characters (two insertions from eight). So a name of 8 or 9 meets a stored key of
6 or 7 through the variants, and a name of 6 or 7 a stored key of 8 or 9 through the pieces.

The tags do not carry n: the stored key's length is the signature's low byte instead (255 for
any longer key, which only lets more through: `reach_range` caps its upper end at 255 too, so
any key within two of one of 255 or more reaches it), and a lookup reads each signature's range
of the lengths within two of the name's (`reach_range`), one search and a short scan. What a tag
without n would let through (the same piece of a key of another length) stays outside the range,
inside the index, and the table needs no column more.

The claim is checked exhaustively against a brute-force OSA scan (tests/dedup/policy/
test_signatures.py). A signature is 56 bits of BLAKE2b and the length: a collision can only add
a candidate, which the policy then rejects, never lose one. A stored key yields at most n + 2
signatures (1 + n + n(n - 1) / 2 for a short one); a lookup asks as many, and a name of up to
nine characters the variants of it a short key's may meet, in one query.

Changing anything here changes the signatures stored: it needs a data migration that recomputes
them (as dedup/0011 did).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import TypeVar

from rapidfuzz import process
from rapidfuzz.distance import OSA

from dedup.policy.entities import MAX_POSSIBLE_EDITS

SHORT_KEY_CHARS = 7
_LENGTH_BITS = 8
_LONGEST = (1 << _LENGTH_BITS) - 1  # the length a longer key (casefolding can lengthen) carries
_Text = TypeVar("_Text", str, bytes)
_REACH = MAX_POSSIBLE_EDITS  # the proof above is for two edits; the exhaustive test holds it


def _deletions(text: _Text, depth: int, fewest: int = 0) -> set[_Text]:
    """The text and every variant of it with up to `depth` characters (or bytes) deleted; with
    `fewest`, only the variants with that many deleted or more."""
    variants = {text} if fewest == 0 else set()
    frontier = {text}
    for deleted in range(1, depth + 1):
        frontier = {v[:i] + v[i + 1 :] for v in frontier for i in range(len(v))}
        if deleted >= fewest:
            variants |= frontier
    return variants


def _signature(tag: str, variant: str) -> int:
    """A tagged variant's hash with its low byte clear, for a key's length to fill."""
    return _hashed(_tagged(tag) + variant.encode("utf-8", "surrogatepass"))


def _tagged(tag: str) -> bytes:
    return f"{tag}\x1f".encode()


_CLEAR_LENGTH = -(1 << _LENGTH_BITS)  # the mask that clears a signature's low byte


def _hashed(data: bytes) -> int:
    # Signed, to fit a 64-bit column; clearing the low bits keeps it in range.
    digest = hashlib.blake2b(data, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True) & _CLEAR_LENGTH


def key_signatures(key: str) -> frozenset[int]:
    """The signatures stored for a key (an entity's, or an alias's a person recorded), each
    carrying the key's length in its low byte."""
    n = len(key)
    if n <= SHORT_KEY_CHARS:
        # As its lookup just asked them (by the number of deletions): reused, not hashed again.
        pieces = frozenset().union(*(_exact_deletions("F", key, d) for d in range(_REACH + 1)))
    else:
        pieces = _long_pieces(key)
    return frozenset(signature | min(n, _LONGEST) for signature in pieces)


def reach_range(key: str) -> tuple[int, int]:
    """What a lookup adds to each of its `reach_signatures` to bound the range it reads: the
    lengths a stored key within two edits of this one may have (each edit changes the length by
    at most one), the shortest and the longest."""
    return min(max(len(key) - _REACH, 0), _LONGEST), min(len(key) + _REACH, _LONGEST)


@functools.lru_cache(maxsize=16)  # one resolution asks both tables with the same name
def reach_signatures(key: str) -> frozenset[int]:
    """The signatures to look up for a name's key, without a length: every stored key within
    two edits of it has one of them, plus its length (within `reach_range`), among its own
    `key_signatures`.

    The name's variants with, for each short stored length in reach, the most deletions it
    allows (`_deletions_needed`), and, if a long one may be within reach, the name's own pieces, cut
    as a long key's are (the module's docstring says why its own cut finds a stored key of any
    length): 22 for a key of 20, one search of each table each, where asking each stored
    length's cut asked 62."""
    length = len(key)
    found: set[int] = set()
    short = _deletions_needed(length, range(max(length - _REACH, 0), SHORT_KEY_CHARS + 1))
    for count in short:
        found |= _exact_deletions("F", key, count)
    if length + _REACH > SHORT_KEY_CHARS:
        found |= _long_pieces(key)
    return frozenset(found)


def _long_pieces(key: str) -> frozenset[int]:
    """A key's two pieces at its cut (n // 2), each with up to one deletion, tagged with its
    side: what a long key stores, but for its length, and what a lookup asks of a name."""
    cut = len(key) // 2
    return _piece_signatures("L", key[:cut], 1) | _piece_signatures("R", key[cut:], 1)


def _deletions_needed(length: int, stored_lengths: range) -> set[int]:
    """How many characters a short name's key must lose for its variants to meet those of a
    stored short key of each length: the name loses d and the stored key e (each at most two,
    as stored), and d - e is the name's length less the stored one (an insertion costs the name
    one deletion, a deletion the stored key one, a substitution or swap one each).

    Of the d a stored length allows, only the largest: a variant both keys share with d and e
    deletions, while d < that largest, is not empty (it keeps L - d characters, and d < that
    largest d <= L, the name's length L), and with one of its characters deleted it is a
    variant of each with d + 1 and e + 1 deletions, still within two on both sides; so the keys
    share one at the largest d too."""
    needed = set()
    for stored in stored_lengths:
        allowed = [
            d for d in range(min(_REACH, length) + 1) if 0 <= d - (length - stored) <= _REACH
        ]
        if allowed:
            needed.add(max(allowed))
    return needed


def _exact_deletions(tag: str, piece: str, count: int) -> frozenset[int]:
    """The signatures of a piece's variants with exactly `count` characters deleted (none: the
    piece's own). Made so, not as a difference of sets: two variants whose hashes collide must
    both be asked."""
    return _piece_signatures(tag, piece, count, count)


# A name's lookup computes each tagged piece once, and a new entity's own signatures (its key
# cut at n // 2, or its variants) are among those its lookup just computed: the store reuses them.
@functools.lru_cache(maxsize=1024)
def _piece_signatures(tag: str, piece: str, depth: int, fewest: int = 0) -> frozenset[int]:
    """The signatures of a piece's variants with up to `depth` deletions (and at least `fewest`),
    tagged: `_signature` of each. A piece in ASCII (most names) has its variants made from its
    bytes, where a byte deleted is a character deleted, so none is encoded again (25 us a piece
    rather than 36; tests/dedup/policy/test_signatures.py holds the values to the definition's)."""
    tagged = _tagged(tag)
    encoded = piece.encode("utf-8", "surrogatepass")
    if len(encoded) != len(piece):
        variants = _deletions(piece, depth, fewest)
        return frozenset([_signature(tag, variant) for variant in variants])
    # `_hashed` written out in the loop: a lookup hashes about a hundred variants, and the call
    # cost as much as the hash (1.4 us a variant against 0.8; the values are `_hashed`'s).
    blake2b, from_bytes, mask = hashlib.blake2b, int.from_bytes, _CLEAR_LENGTH
    return frozenset(
        [
            from_bytes(blake2b(tagged + variant, digest_size=8).digest(), "big", signed=True) & mask
            for variant in _deletions(encoded, depth, fewest)
        ]
    )


def within_reach(key: str, other: str) -> bool:
    """Whether two keys are within two edits (OSA) of each other: the set the signature lookups
    return is exactly the stored keys for which this holds (rapidfuzz stops at the bound)."""
    return OSA.distance(key, other, score_cutoff=_REACH) <= _REACH


def indexes_within_reach(key: str, others: Sequence[str]) -> list[int]:
    """The positions in `others` of the keys `within_reach` of this one, in their order: one
    call that loops in C (a lookup can return thousands of keys for a name whose pieces many
    share: 0.6 ms judged one call each, a third of that here)."""
    found = process.extract(key, others, scorer=OSA.distance, score_cutoff=_REACH, limit=None)
    return sorted(index for _, _, index in found)
