"""Signatures of entity keys: two keys within MAX_POSSIBLE_EDITS (OSA) of each other always
share one, so an index of them finds every key a name might be a typo of, or resemble.

This is a deletion neighbourhood (symmetric delete, as in SymSpell), partitioned for long keys:

- A short key (SHORT_KEY_CHARS or fewer) is stored as its variants with up to two deletions
  ("F"). Each OSA edit - substitution, insertion, deletion, adjacent swap - is undone by at most
  one deletion on each side (a swap "xy"/"yx" by deleting "x" from both), so two keys within two
  edits have a variant in common.
- A long key of length n is cut at m = n // 2 into a left and a right piece, each stored as its
  variants with up to one deletion, tagged with the side. Two edits, plus one more charge when a
  swap straddles the cut (it is a substitution on each side), leave one piece with at most one
  edit; that piece of the other key starts or ends within one character of the cut (an edit
  inside a piece changes its length by at most one). So a lookup asks, for every length n the
  stored key may have (the name's length plus or minus two), the one-deletion variants of the
  name's prefixes of m - 1, m and m + 1 characters, and of its suffixes likewise.

The tags do not carry n: the five lengths a lookup covers share their cuts and pieces (a prefix
asked for n = 14 is asked for n = 15 too), so it asks about 70 signatures for a key of 14
rather than 220, and each stored signature sits beside its key's length, which the lookup bounds
to `reach_lengths` (the index's second column: palace/0017). What a tag without n lets through
(the left piece of a key of another length) is kept out by that bound, inside the index.

The claim is checked exhaustively against a brute-force OSA scan (tests/dedup/policy/
test_signatures.py). A signature is 64 bits of BLAKE2b: a collision can only add a candidate,
which the policy then rejects, never lose one. A stored key yields at most n + 2 signatures
(1 + n + n(n - 1) / 2 for a short one); a lookup computes several dozen and asks them in one
query.

Changing anything here changes the signatures stored: it needs a data migration that recomputes
them (as palace/0017 did).
"""

from __future__ import annotations

import functools
import hashlib

from rapidfuzz.distance import OSA

from dedup.policy.entities import MAX_POSSIBLE_EDITS

SHORT_KEY_CHARS = 7
_REACH = MAX_POSSIBLE_EDITS  # the proof above is for two edits; the exhaustive test holds it


def _deletions(text: str, depth: int) -> set[str]:
    """The text and every variant of it with up to `depth` characters deleted."""
    variants = {text}
    frontier = {text}
    for _ in range(depth):
        frontier = {v[:i] + v[i + 1 :] for v in frontier for i in range(len(v))}
        variants |= frontier
    return variants


def _signature(tag: str, variant: str) -> int:
    digest = hashlib.blake2b(
        f"{tag}\x1f{variant}".encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)  # fits a signed 64-bit column


def key_signatures(key: str) -> frozenset[int]:
    """The signatures stored for a key (an entity's, or an alias's a person recorded), each
    beside the key's length."""
    n = len(key)
    if n <= SHORT_KEY_CHARS:
        return _piece_signatures("F", key, _REACH)
    cut = n // 2
    return _piece_signatures("L", key[:cut], 1) | _piece_signatures("R", key[cut:], 1)


def reach_lengths(key: str) -> tuple[int, int]:
    """The lengths a stored key within two edits of this one may have (each edit changes the
    length by at most one): the bound a lookup keeps its signatures' keys within."""
    return max(len(key) - _REACH, 0), len(key) + _REACH


@functools.lru_cache(maxsize=16)  # one resolution asks both tables with the same name
def reach_signatures(key: str) -> frozenset[int]:
    """The signatures to look up for a name's key: every stored key within two edits of it (its
    length within `reach_lengths`) has one of them among its own `key_signatures`."""
    length = len(key)
    found: set[int] = set()
    if length - _REACH <= SHORT_KEY_CHARS:
        found |= _piece_signatures("F", key, _REACH)
    lefts: set[int] = set()
    rights: set[int] = set()
    for n in range(max(length - _REACH, SHORT_KEY_CHARS + 1), length + _REACH + 1):
        cut = n // 2
        lefts |= {cut - 1, cut, cut + 1}
        rights |= {n - cut - 1, n - cut, n - cut + 1}
    for size in lefts:
        if 0 <= size <= length:
            found |= _piece_signatures("L", key[:size], 1)
    for size in rights:
        if 0 <= size <= length:
            found |= _piece_signatures("R", key[length - size :], 1)
    return frozenset(found)


# A name's lookup computes each tagged piece once, and a new entity's own signatures (its key
# cut at n // 2, or its variants) are among those its lookup just computed: the store reuses them.
@functools.lru_cache(maxsize=1024)
def _piece_signatures(tag: str, piece: str, depth: int) -> frozenset[int]:
    """The signatures of a piece's variants with up to `depth` deletions, tagged."""
    return frozenset(_signature(tag, variant) for variant in _deletions(piece, depth))


def within_reach(key: str, other: str) -> bool:
    """Whether two keys are within two edits (OSA) of each other: the set the signature lookups
    return is exactly the stored keys for which this holds (rapidfuzz stops at the bound)."""
    return OSA.distance(key, other, score_cutoff=_REACH) <= _REACH
