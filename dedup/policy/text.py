"""Normalised text, fingerprints and the words a lexical candidate query is built from."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

import regex

# A letter (the Unicode Alphabetic property, which also holds vowel signs that str.isalnum()
# drops), a number (categories N*), or a mark on one of them (category M: a Thai tone mark, a
# Devanagari virama or nukta, a combining accent NFC leaves apart; "ป่า" is not "ป้า", and
# "क्षत्रिय" is one word). Everything else separates words, marks with it (a variation selector
# after an emoji).
_NOT_WORD = regex.compile(r"[^\p{Alphabetic}\p{N}\p{M}]+(?:\p{M}+[^\p{Alphabetic}\p{N}\p{M}]*)*")
_LEADING_MARKS = regex.compile(r"^[\p{M}\s]+")
_MARK = regex.compile(r"\p{M}")
# A text with no character that is or makes a mark (dedup/0017) is split by the simpler rule,
# the same words for less work on every write: ASCII by letters and digits alone.
_MAY_HOLD_MARKS = re.compile("[\u0130\u01f0\u0300-\U0010ffff]")
_NOT_LETTER_OR_NUMBER = regex.compile(r"[^\p{Alphabetic}\p{N}]+")
_NOT_ASCII_WORD = re.compile(r"[^a-z0-9]+")

# Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese,
# Tibetan): a sentence of them is one "word" of a normalised text, which a one-character variant
# breaks whole. The index and the queries cut such runs into pieces (`index_text`).
# Their letters by the scripts that use them (Script_Extensions: the kana prolonged sound mark ー
# too), but for the combining marks and modifier letters Latin shares with them (a decomposed
# accent, the modifier apostrophe).
_UNSPACED = regex.compile(
    r"(?V1)[[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}"
    r"\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tibetan}]--[\p{sc=Inherited}\p{Block=Spacing_Modifier_Letters}]]+"
)
# Every letter _UNSPACED matches lies in these ranges of code points (more lie there too), so a
# text with none in them has no index text: Thai to Myanmar, Khmer, CJK (from the iteration mark)
# and kana, Myanmar's extensions, compatibility ideographs, halfwidth kana, and the supplementary
# planes' kana, Tangut, Khitan, counting rods and ideographs (tests/dedup/policy/
# test_index_text.py). `index_text` and `dedup.backfill` ask them first; the policy decides.
UNSPACED_RANGES = (
    (0x0E00, 0x10FF),
    (0x1780, 0x17FF),
    (0x3000, 0x9FFF),
    (0xA9E0, 0xAA7F),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x11600, 0x116FF),
    (0x16FE0, 0x16FFF),
    (0x17000, 0x18DFF),
    (0x1AFF0, 0x1B2FF),
    (0x1D360, 0x1D37F),
    (0x20000, 0x3FFFF),
)
UNSPACED_CHARACTERS = "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_RANGES)
# Tests in C, each a few microseconds on a long text (the `regex` scan: 20 to 50): the first
# passes every text with a character past U+0E00 (Korean, Vietnamese too), the second only those
# with a character in the ranges.
_BEYOND_SPACED = re.compile("[\u0e00-\U0010ffff]")
_MAYBE_UNSPACED = re.compile(f"[{UNSPACED_CHARACTERS}]")
# Korean is written with spaces, but a word's particles and endings are written onto it
# ("서울에서", in Seoul): its index text holds the pairs of each word's syllables (as for the
# scripts above), so search finds "서울" in "서울에서". Syllables only: a normalised text is NFC,
# whose syllables are composed.
HANGUL_SYLLABLES = "\uac00-\ud7a3"
_HANGUL = re.compile(f"[{HANGUL_SYLLABLES}]+")
# Every text with an index text has one of these characters (`dedup.backfill` asks them).
INDEXED_CHARACTERS = UNSPACED_CHARACTERS + HANGUL_SYLLABLES
UNSPACED_PIECE_MIN = 3  # a piece is a query word (`is_query_word`): longer than two characters
UNSPACED_PIECE_MAX = 12
UNSPACED_WHOLE_MAX = 6  # a run this long or shorter stays whole, as a word would

MAX_QUERY_WORDS = 48
QUERY_WORD_MIN_CHARS_EXCLUSIVE = 2
# Longer words are not asked: a full-text index keeps words of a bounded size (PostgreSQL's
# lexemes hold at most 2,047 bytes, four a character at worst), and the text's other words find
# its variants (a word that long is a hash or an encoded blob).
QUERY_WORD_MAX_CHARS = 500


# Characters written in another width than their usual one: the Halfwidth and Fullwidth Forms
# (full-width Latin letters, digits and signs an input method for Chinese, Japanese or Korean
# types, half-width katakana and Hangul) and the ideographic space. Each is mapped to the one
# character its <wide> or <narrow> decomposition names, and nothing else is: NFKC would also fold
# "x²" into "x2", "①" into "1" and "ﬁ" into "fi", other texts (tests/dedup/policy/test_text.py).
_OTHER_WIDTH = re.compile("[\u3000\uff00-\uffef]")
_USUAL_WIDTH = {
    code: int(decomposition.split()[1], 16)
    for code in (0x3000, *range(0xFF00, 0xFFF0))
    if (decomposition := unicodedata.decomposition(chr(code))).startswith(("<wide>", "<narrow>"))
}


def fold(text: str) -> str:
    """NFC, each character in its usual width ("ＡＷＳ" is "AWS", "ﾊﾞｹｯﾄ" is "バケット"), then
    casefold: what a normalised text and an entity key start from."""
    text = unicodedata.normalize("NFC", text)
    if not text.isascii() and _OTHER_WIDTH.search(text):
        # Again NFC: a half-width voiced sound mark becomes a combining one, which joins its kana.
        text = unicodedata.normalize("NFC", text.translate(_USUAL_WIDTH))
    return text.casefold()


def normalize_text(text: str) -> str:
    """Folded (NFC, usual widths, casefold: `fold`), then every run of non-letters and
    non-digits becomes one space (a letter's marks are its own).

    Accents are not folded: "café" and "cafe" are different words.
    """
    folded = fold(text)
    if folded.isascii():
        return _NOT_ASCII_WORD.sub(" ", folded).strip()
    if not _MAY_HOLD_MARKS.search(folded):
        return _NOT_LETTER_OR_NUMBER.sub(" ", folded).strip()
    return without_leading_marks(_NOT_WORD.sub(" ", folded).strip())


def without_leading_marks(text: str) -> str:
    """A text whose first characters are marks on nothing, without them."""
    return _LEADING_MARKS.sub("", text) if _MARK.match(text) else text


def content_hash(content: str) -> str:
    """SHA-256 of the verbatim content's UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def fingerprint(text: str) -> str | None:
    """SHA-256 of the normalised text, or None when the text has no letter or digit."""
    normalized = normalize_text(text)
    return fingerprint_of_normalized(normalized)


def fingerprint_of_normalized(normalized: str) -> str | None:
    if not normalized:
        return None
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def may_be_unspaced(normalized: str) -> bool:
    """False when a text surely holds no letter of a script written without spaces: quick tests
    in C, for every write (`str.isascii`, a character past U+0E00, one in UNSPACED_RANGES)."""
    return not (
        normalized.isascii()
        or not _BEYOND_SPACED.search(normalized)
        or not _MAYBE_UNSPACED.search(normalized)
    )


@functools.lru_cache(maxsize=16)  # a write asks twice: for its row, and for its query's words
def index_text(normalized: str, pairs: bool = True, hangul: bool = True) -> str | None:
    """The words a full-text index holds of a normalised text, where they are not its own words:
    each run of a script written without spaces becomes a word of its own (the Latin and the
    digits beside it too), and a run longer than UNSPACED_WHOLE_MAX is cut into pieces. None
    when no word changes (a text with no such run and no Korean word, nearly every text in a
    spaced script).

    A piece ends after UNSPACED_PIECE_MIN characters or more at a character the content chooses
    (`_ends_piece`), or at UNSPACED_PIECE_MAX. Where pieces end depends on the characters there,
    not on their position in the text, so an edit changes only the pieces around it and the
    others, the same in a variant as in its original, find it; and a run's first pieces are
    those of any text starting with the same characters. Only the index and the queries see the
    pieces: comparisons, fingerprints and exact matches keep the normalised text.

    After each run of three or more (of Korean syllables too, `hangul_runs`) come its pairs of
    neighbouring characters not written before (`character_pairs`), for search to find a word
    anywhere in a sentence or with its particles; no query of the write path asks them
    (`is_query_word`: they are too short). Beside their run, they are kept wherever its pieces
    are (PostgreSQL indexes the first characters of an index text). The rules before: dedup
    0019's (`pairs=False`, its reverse), and 0020's (`hangul=False`)."""
    # Quick tests in C first (`may_be_unspaced`'s), from the first character past U+0E00.
    beyond = None if normalized.isascii() else _BEYOND_SPACED.search(normalized)
    if beyond is None:
        return None
    unspaced = bool(_MAYBE_UNSPACED.search(normalized, beyond.start()))
    unspaced = unspaced and _UNSPACED.search(normalized) is not None
    korean = pairs and hangul and bool(_HANGUL.search(normalized, beyond.start()))
    if not (unspaced or korean):
        return None
    words: list[str] = []
    written: set[str] = set()

    def add_pairs(run: str) -> None:
        new = [pair for pair in character_pairs(run) if pair not in written]
        written.update(new)
        words.extend(new)

    for word in normalized.split(" "):
        for part in _parts(word) if unspaced else [word]:
            if not (unspaced and _UNSPACED.fullmatch(part)):
                # A Korean word too long to be asked (`is_query_word`) stands for its pairs
                # alone: a hundred thousand syllables unspaced filled what PostgreSQL indexes.
                if not (korean and len(part) > QUERY_WORD_MAX_CHARS and _HANGUL.search(part)):
                    words.append(part)
                for run in _HANGUL.findall(part) if korean else []:
                    if len(run) > 2 or run != part:  # two alone are a word: its own pair
                        add_pairs(run)
                continue
            words.extend(_pieces(part))
            if pairs and len(part) > 2:
                add_pairs(part)
    indexed = " ".join(words)
    return None if indexed == normalized else indexed


def character_pairs(run: str) -> list[str]:
    """The distinct pairs of neighbouring characters of a run, in text order: a drawer holding
    the run anywhere in a sentence holds them all in its index (a run of two is a word of its
    own), which is how search finds a word of a script written without spaces, as search engines
    for Chinese and Japanese do."""
    return list(dict.fromkeys(run[i : i + 2] for i in range(len(run) - 1)))


def unspaced_runs(normalized: str) -> list[str]:
    """The runs of a script written without spaces in a normalised text, in text order."""
    if not may_be_unspaced(normalized):
        return []
    return _UNSPACED.findall(normalized)


# The particles Korean writes onto a word (the common ones; longest first): a search for
# "데이터베이스를" also asks "데이터베이스", which a drawer may hold with another particle or none.
KOREAN_PARTICLES = tuple(
    sorted(
        "은 는 이 가 을 를 에 의 로 와 과 도 만 나 에서 으로 에게 까지 부터 처럼 보다 한테 께서 "
        "이나 이랑 랑 하고 마다 조차 밖에 에서는 에게는 으로는 에는 와는 과는".split(),
        key=len,
        reverse=True,
    )
)


def korean_stem(run: str) -> str | None:
    """A Korean word without the particle it ends with, if that leaves two syllables or more
    (`KOREAN_PARTICLES`); else None."""
    for particle in KOREAN_PARTICLES:
        if run.endswith(particle) and len(run) - len(particle) >= 2:
            return run[: -len(particle)]
    return None


def hangul_runs(normalized: str) -> list[str]:
    """The runs of Korean syllables in a normalised text, in text order."""
    return _HANGUL.findall(normalized) if not normalized.isascii() else []


def is_unspaced(word: str) -> bool:
    """Whether a word is all letters of a script written without spaces (a piece of a run, or a
    short run whole): a few of them are as telling as a long word of a spaced script."""
    return may_be_unspaced(word) and _UNSPACED.fullmatch(word) is not None


def indexed_text(normalized: str) -> str:
    """The text whose words the index holds: `index_text`, or the normalised text itself."""
    return index_text(normalized) or normalized


def _parts(word: str) -> list[str]:
    """A word cut where a run of an unspaced script starts or ends."""
    parts, start = [], 0
    for run in _UNSPACED.finditer(word):
        parts += [word[start : run.start()], run.group()]
        start = run.end()
    return [part for part in [*parts, word[start:]] if part]


def _pieces(run: str) -> list[str]:
    if len(run) <= UNSPACED_WHOLE_MAX:
        return [run]
    pieces, start = [], 0
    for end in range(1, len(run) + 1):
        size = end - start
        if size >= UNSPACED_PIECE_MIN and (size == UNSPACED_PIECE_MAX or _ends_piece(run[end - 1])):
            pieces.append(run[start:end])
            start = end
    if start < len(run):  # the tail, shorter than UNSPACED_PIECE_MIN maybe (then never asked)
        pieces.append(run[start:])
    return pieces


def _ends_piece(character: str) -> bool:
    """About one character in three, the same ones in every text (a multiplicative hash of the
    code point, so related characters, next to each other in Unicode, are spread)."""
    return (((ord(character) * 2654435761) & 0xFFFFFFFF) >> 16) % 3 == 0


def query_words(text: str, *, limit: int = MAX_QUERY_WORDS) -> list[str]:
    """The distinct words of a text worth a lexical query, longest first, at most `limit`.

    Long words are rare words, and a rare word is what finds a variant cheaply. Words of two
    characters or fewer say little and are left out, and so are words over QUERY_WORD_MAX_CHARS.
    Ties keep their order in the text, so the list is deterministic.
    """
    return query_words_of_normalized(normalize_text(text), limit=limit)


def is_query_word(word: str) -> bool:
    """Whether a word of a normalised text is long enough, and not too long, to be asked."""
    return QUERY_WORD_MIN_CHARS_EXCLUSIVE < len(word) <= QUERY_WORD_MAX_CHARS


def query_words_of_normalized(normalized: str, *, limit: int = MAX_QUERY_WORDS) -> list[str]:
    """`query_words` of a text already normalised: of the words the index holds of it. Words of
    a script written without spaces (`is_unspaced`) come after the others and in text order: a
    piece's length says nothing of its rarity, and an edit breaks neighbouring pieces, which
    `dedup.candidates.lexical_groups` then keeps together."""
    seen: dict[str, int] = {}
    for position, word in enumerate(indexed_text(normalized).split(" ")):
        if is_query_word(word) and word not in seen:
            seen[word] = position
    ordered = sorted(
        seen,
        key=lambda word: (1, 0, seen[word]) if is_unspaced(word) else (0, -len(word), seen[word]),
    )
    return ordered[:limit]
