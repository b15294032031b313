"""The signature index loses no key within two edits: its lookups, checked against a brute-force
OSA scan of 100,000 random and adversarial keys, and exhaustively over a two-letter alphabet
(repeated letters are where a deletion neighbourhood is most easily wrong)."""

from __future__ import annotations

import hashlib
import itertools
import random
import unicodedata
from collections import defaultdict
from collections.abc import Iterator

import numpy
import pytest
from rapidfuzz import process
from rapidfuzz.distance import OSA

from dedup.policy import edit_distance, entity_key
from dedup.policy.signatures import (
    SHORT_KEY_CHARS,
    indexes_within_reach,
    key_signatures,
    reach_range,
    reach_signatures,
    within_reach,
)

REACH = 2
STORED = 100_000
PROBES = 1_500

LATIN = "abcdefghijklmnopqrstuvwxyz"
SCRIPTS = [
    LATIN,
    "αβγδεζηθικλμνξοπρστυφχψω",  # Greek
    "абвгдежзийклмнопрстуфхцчшщъыьэюя",  # Cyrillic
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年",  # CJK
    "ab",  # two letters: repeated letters everywhere
]
ACCENTS = "\u0301\u0300\u0308\u0327\u0323"  # combining marks, some without a precomposed form


def random_key(rng: random.Random) -> str:
    letters = rng.choice(SCRIPTS)
    length = rng.choice([rng.randint(1, 6), rng.randint(6, 14), rng.randint(14, 40)])
    chars = [rng.choice(letters) for _ in range(length)]
    if rng.random() < 0.15:  # accents, combined where Unicode has a precomposed letter
        for _ in range(rng.randint(1, 3)):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(ACCENTS))
    if rng.random() < 0.2 and length > 3:  # words
        chars[rng.randrange(1, length - 1)] = " "
    name = "".join(chars)
    return entity_key(unicodedata.normalize("NFC", name)) or "x"


def edited(key: str, rng: random.Random, edits: int) -> str:
    """`edits` random OSA edits: substitution, insertion, deletion or adjacent swap."""
    letters = rng.choice(SCRIPTS) + ACCENTS
    for _ in range(edits):
        kind = rng.choice(["swap", "drop", "replace", "insert"])
        if kind == "insert" or len(key) < 2:
            at = rng.randrange(len(key) + 1)
            key = key[:at] + rng.choice(letters) + key[at:]
        elif kind == "swap":
            at = rng.randrange(len(key) - 1)
            key = key[:at] + key[at + 1] + key[at] + key[at + 2 :]
        elif kind == "drop":
            at = rng.randrange(len(key))
            key = key[:at] + key[at + 1 :]
        else:
            at = rng.randrange(len(key))
            key = key[:at] + rng.choice(letters) + key[at + 1 :]
    return key


def stored_keys(rng: random.Random) -> list[str]:
    """Random keys, and clusters of near variants of them: most probes have several neighbours."""
    keys: set[str] = set()
    while len(keys) < STORED:
        base = random_key(rng)
        keys.add(base)
        for _ in range(rng.choice([0, 0, 3, 10])):
            keys.add(edited(base, rng, rng.randint(1, 3)))
    return sorted(keys)[:STORED]


def index_of(keys: list[str]) -> dict[int, list[int]]:
    """Each stored signature's keys, as the tables hold them."""
    index: dict[int, list[int]] = defaultdict(list)
    for position, key in enumerate(keys):
        for signature in key_signatures(key):
            index[signature].append(position)
    return index


def found_by_index(index: dict[int, list[int]], keys: list[str], probe: str) -> set[int]:
    """What the candidate layer returns: the keys whose signature is one asked plus a length
    within `reach_range`, kept by `within_reach`."""
    proposed = {p for s in asked(probe) for p in index.get(s, ())}
    return {p for p in proposed if within_reach(probe, keys[p])}


def found_by_scan(keys: list[str], probes: list[str]) -> Iterator[set[int]]:
    for start in range(0, len(probes), 100):
        chunk = probes[start : start + 100]
        distances = process.cdist(
            chunk, keys, scorer=OSA.distance, score_cutoff=REACH + 1, dtype=numpy.uint8
        )
        for row in distances:
            yield set(numpy.flatnonzero(row <= REACH).tolist())


def test_the_index_finds_what_a_full_scan_finds_over_100000_keys():
    rng = random.Random(20261130)
    keys = stored_keys(rng)
    index = index_of(keys)
    probes = [edited(rng.choice(keys), rng, rng.choice([1, 1, 2, 2, 3])) for _ in range(PROBES)]
    probes += [random_key(rng) for _ in range(PROBES // 5)]
    lost, neighbours = [], 0
    for probe, expected in zip(probes, found_by_scan(keys, probes), strict=True):
        neighbours += len(expected)
        if found_by_index(index, keys, probe) != expected:
            lost.append(probe)
    assert lost == []
    assert neighbours > PROBES  # the probes did have neighbours to lose


def within_two_edits(key: str, letters: str) -> set[str]:
    def one(text: str) -> set[str]:
        out = {text[:i] + c + text[i:] for i in range(len(text) + 1) for c in letters}
        out |= {text[:i] + text[i + 1 :] for i in range(len(text))}
        out |= {text[:i] + c + text[i + 1 :] for i in range(len(text)) for c in letters}
        out |= {text[:i] + text[i + 1] + text[i] + text[i + 2 :] for i in range(len(text) - 1)}
        return out

    return {far for near in one(key) for far in one(near) | {near}}


def test_every_key_within_two_edits_shares_a_signature_exhaustively():
    """Every key over {a, b} up to 11 characters (a sample of the longer ones), against every
    key within two edits of it: the lengths around SHORT_KEY_CHARS and the cut are all here."""
    rng = random.Random(7)
    lost = []
    for length in range(SHORT_KEY_CHARS + 5):
        keys = ["".join(p) for p in itertools.product("ab", repeat=length)]
        for key in rng.sample(keys, min(len(keys), 40)):
            stored = key_signatures(key)
            lost += [
                (key, other)
                for other in within_two_edits(key, "ab")
                if OSA.distance(key, other) <= REACH and not stored & asked(other)
            ]
    assert lost == []


def test_every_long_key_within_two_edits_shares_a_signature():
    """Long keys (the pieces' lookup, which asks the name's own cut only): a sample of the
    keys within two edits of keys of 12 to 30 characters, over two letters and a space, so that
    edits land on repeats, at the cut and beside it."""
    rng = random.Random(11)
    lost = []
    for length in range(SHORT_KEY_CHARS + 5, 31):
        for _ in range(3):
            key = "".join(rng.choices("ab ", k=length))
            stored = key_signatures(key)
            near = sorted(within_two_edits(key, "ab "))
            lost += [
                (key, other)
                for other in rng.sample(near, min(len(near), 400))
                if OSA.distance(key, other) <= REACH and not stored & asked(other)
            ]
    assert lost == []


def edits_at(text: str, letters: str, positions: set[int]) -> set[str]:
    """Every text one edit from this one at the given positions (an insertion before, a
    deletion, a substitution, or a swap with the next character)."""
    out = set()
    for i in positions:
        if 0 <= i <= len(text):
            out |= {text[:i] + c + text[i:] for c in letters}
        if 0 <= i < len(text):
            out.add(text[:i] + text[i + 1 :])
            out |= {text[:i] + c + text[i + 1 :] for c in letters}
        if 0 <= i < len(text) - 1:
            out.add(text[:i] + text[i + 1] + text[i] + text[i + 2 :])
    return out


def test_every_two_edits_at_the_cut_and_the_ends_share_a_signature():
    """Every name two edits from a key with both edits beside its cut or at its ends, where a
    piece's characters move across its edge (lengths either side of the short keys' and of an
    odd cut): exhaustive where the sampled tests are not. The keys' letters are all distinct
    and the edits bring others, so no variant meets another by chance (over two letters most
    do, which hides a piece the lookup fails to ask)."""
    lost = []
    for length in range(7, 22):
        key = "abcdefghijklmnopqrstuvw"[:length]
        stored = key_signatures(key)
        cut = length // 2
        window = {*range(3), *range(cut - 3, cut + 4), *range(length - 3, length + 2)}
        once = edits_at(key, "xy", window)
        twice = {far for near in once for far in edits_at(near, "xy", window)}
        lost += [
            (key, other)
            for other in once | twice
            if OSA.distance(key, other) <= REACH and not stored & asked(other)
        ]
    assert lost == []


def near_both_ways(keys, letters: str) -> Iterator[tuple[str, str]]:
    """Every (name, stored) pair of a key and a key within two edits of it, each way round:
    the lookup is not symmetric where short keys meet long ones."""
    for key in keys:
        for other in within_two_edits(key, letters):
            if OSA.distance(key, other) <= REACH:
                yield key, other
                yield other, key


def test_every_key_of_two_letters_up_to_seven_is_found_both_ways():
    """Every key over {a, b} of up to seven characters and every key within two edits of it
    (a third letter inserted too), each as the name and as the stored key."""
    keys = ("".join(p) for n in range(8) for p in itertools.product("ab", repeat=n))
    lost = [
        (name, stored)
        for name, stored in near_both_ways(keys, "abc")
        if not key_signatures(stored) & asked(name)
    ]
    assert lost == []


def test_every_two_edits_anywhere_in_keys_of_distinct_letters_both_ways():
    """Keys of 1 to 16 distinct letters, every two edits anywhere (letters of the key among
    them), each way round: no variant meets another by chance, so a piece the lookup fails to
    ask shows (a lookup cut one character off, or without a piece's deletions, fails it)."""
    keys = ["ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n] for n in range(1, 17)]
    lost = [
        (name, stored)
        for name, stored in near_both_ways(keys, "xyAH")
        if not key_signatures(stored) & asked(name)
    ]
    assert lost == []


def asked(probe: str) -> set[int]:
    """Every stored value a lookup's ranges cover: each signature asked plus each length."""
    low, high = reach_range(probe)
    return {s + length for s in reach_signatures(probe) for length in range(low, high + 1)}


def test_a_lookup_asks_few_signatures():
    """A long name asks its own two pieces with up to one deletion each: n + 2 at most, where
    asking every stored length's cut asked nearly three times as many (62 for a key of 20)."""
    for key in ("ada lovelace x", "ada lovelace of the engine"):
        assert len(reach_signatures(key)) <= len(key) + 2, key


def test_a_long_name_asks_what_it_would_store():
    """From ten characters no short key is within reach: a lookup asks exactly the name's own
    signatures, without their length."""
    for key in ("ada lovelace", "lovelace x", "λόγος αβγ δ", "ab" * 20):
        assert reach_signatures(key) == {s & -256 for s in key_signatures(key)}, key


def variants(key: str, count: int) -> set[int]:
    """What a lookup would ask of a key's variants with exactly `count` deletions."""
    return {
        tagged_signature("F", "".join(c for i, c in enumerate(key) if i not in gone), 0)
        for gone in itertools.combinations(range(len(key)), count)
    }


@pytest.mark.parametrize("key", ["abcdefg", "abcdefgh", "abcdefghi"])
def test_a_short_name_asks_only_the_most_deletions_a_stored_length_allows(key):
    """Names of seven to nine reach short stored keys of five to seven: of their own variants,
    only those with two deletions (a variant shared with fewer stays shared with one character
    more deleted on each side), not those with none or one. (A name of nine asked only these
    before the change too; names of six to eight asked more.)"""
    asked_for = reach_signatures(key)
    assert variants(key, 2) <= asked_for
    assert not (variants(key, 0) | variants(key, 1)) & asked_for


def test_a_name_of_six_asks_one_deletion_for_a_stored_key_of_seven():
    """A stored key of seven is an insertion away from a name of six: the name keeps its
    variants with one deletion (against the stored key's with two), and no longer asks its own
    key (no deletion)."""
    key = "abcdef"
    asked_for = reach_signatures(key)
    assert variants(key, 1) | variants(key, 2) <= asked_for
    assert not variants(key, 0) & asked_for


def test_a_lookup_reads_the_lengths_two_either_side():
    assert reach_range("lovelace") == (6, 10)
    assert reach_range("a") == (0, 3)


def test_a_signature_carries_its_key_s_length_in_the_low_byte():
    assert {s & 0xFF for s in key_signatures("ada lovelace")} == {12}
    assert {s & 0xFF for s in reach_signatures("ada lovelace")} == {0}


def test_a_key_longer_than_the_byte_carries_the_longest_and_is_still_found():
    """Casefolding can make a key longer than a name ("ß" is "ss"): 255 stands for any length
    from 255, and a lookup's range reaches it."""
    key = "straße" * 60  # 360 characters
    assert {s & 0xFF for s in key_signatures(key)} == {255}
    assert reach_range(key[:-1]) == (255, 255)
    assert key_signatures(key) & asked(key[:-1] + "x")


def test_a_stored_key_has_few_signatures():
    """The storage the index costs: n + 2 at most for a long key, the full neighbourhood of a
    short one."""
    assert len(key_signatures("ada lovelace")) <= len("ada lovelace") + 2
    assert len(key_signatures("a" * 40)) <= 4  # repeated letters: the variants coincide
    assert len(key_signatures("redis")) == 1 + 5 + 10


@pytest.mark.parametrize(
    ("key", "other"),
    [("ada", "ada"), ("ada", "abd"), ("lovelace", "lovleace"), ("lovelace", "lvleace"), ("", "ab")],
)
def test_within_reach_is_two_osa_edits(key, other):
    assert within_reach(key, other) is (edit_distance(key, other) <= REACH)


def test_within_reach_stops_at_three_edits():
    assert not within_reach("lovelace", "lvlace x")
    assert not within_reach("ada", "")


def test_indexes_within_reach_are_the_keys_within_reach_in_order():
    """The batch form keeps exactly the keys `within_reach` keeps, however many, in order."""
    rng = random.Random(25)
    probe = "lovelace"
    others = [
        "lovelace",
        "lvlace x",
        "",
        "lovleace",
        "ada",
        *("".join(rng.choice("lovace") for _ in range(rng.randint(5, 11))) for _ in range(2000)),
    ]
    expected = [i for i, other in enumerate(others) if within_reach(probe, other)]
    assert expected[:2] == [0, 3]  # the case holds some, and not all
    assert indexes_within_reach(probe, others) == expected


def test_indexes_within_reach_of_nothing_is_nothing():
    assert indexes_within_reach("ada", []) == []


# What the signatures are, pinned: the stored ones must stay those dedup/0011 stored (changing
# them needs a migration that recomputes every row), and a digest of each key's sorted stored
# signatures is the one computed then. What a lookup asks is stored nowhere: it may change with
# no migration while the exactness tests above hold, and is pinned as this release asks it (the
# name's own cut).
PINNED = {
    "ada lovelace": ("5c922cecd2081c7e", "63cf88b3243605ee"),
    "redis": ("4313e20f82188644", "2270e79afc50239e"),
    "straße" * 3: ("edd653a8043e5176", "b6bd3ea54e6a1571"),
    "λόγος αβγ": ("f69c0883f05d2f10", "afdc9f29e42fb35f"),
    "東京タワー展望台": ("581972d3c132421e", "92cc46ac08d8c489"),
    "a\udcffb c": ("98caff5956bf2c6f", "355d1c61879392ed"),  # a lone surrogate
    "ab": ("fe38dcedb127a9b8", "d5f201bb9420d33b"),
}


def digest(signatures: frozenset[int]) -> str:
    return hashlib.sha256(repr(sorted(signatures)).encode()).hexdigest()[:16]


@pytest.mark.parametrize("key", list(PINNED))
def test_the_signatures_stored_are_the_ones_of_dedup_0011_and_asked_as_pinned(key):
    stored, asked_for = PINNED[key]
    assert digest(key_signatures(key)) == stored
    assert digest(reach_signatures.__wrapped__(key)) == asked_for


def tagged_signature(tag: str, variant: str, length: int) -> int:
    """A signature as the module's docstring defines it: BLAKE2b of the tag, a unit separator
    and the variant, 56 bits of it and a length (none in what a lookup asks)."""
    data = f"{tag}\x1f{variant}".encode("utf-8", "surrogatepass")
    value = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)
    return value & -256 | length


def reference_signatures(key: str) -> frozenset[int]:
    """`key_signatures` as the module's docstring defines it, one variant at a time: BLAKE2b of
    the tag, a unit separator and the variant, 56 bits of it and the key's length."""

    def signature(tag: str, variant: str) -> int:
        return tagged_signature(tag, variant, min(len(key), 255))

    def deletions(text: str, depth: int) -> set[str]:
        return {
            "".join(text[i] for i in range(len(text)) if i not in gone)
            for count in range(depth + 1)
            for gone in itertools.combinations(range(len(text)), count)
        }

    if len(key) <= SHORT_KEY_CHARS:
        return frozenset(signature("F", v) for v in deletions(key, 2))
    cut = len(key) // 2
    return frozenset(
        {signature("L", v) for v in deletions(key[:cut], 1)}
        | {signature("R", v) for v in deletions(key[cut:], 1)}
    )


def test_the_signatures_are_the_definition_s_in_any_script():
    """The ASCII shortcut (variants made from bytes) and the general path agree with the
    definition, over keys of every script and length around the short-key bound."""
    rng = random.Random(25)
    for _ in range(3_000):
        alphabet = rng.choice([*SCRIPTS, LATIN + " .-0123456789", LATIN + "é"])
        key = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        assert key_signatures(key) == reference_signatures(key), key
