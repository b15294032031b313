"""Normalised text, fingerprints and the words a lexical candidate query is built from."""

from __future__ import annotations

import hashlib
import unicodedata

import regex

# A letter (the Unicode Alphabetic property, which also holds vowel signs that str.isalnum()
# drops) or a number (categories N*). Everything else separates words.
_NOT_WORD = regex.compile(r"[^\p{Alphabetic}\p{N}]+")

MAX_QUERY_WORDS = 48
QUERY_WORD_MIN_CHARS_EXCLUSIVE = 2
# Longer words are not asked: a full-text index keeps words of a bounded size (PostgreSQL's
# lexemes hold at most 2,047 bytes, four a character at worst), and the text's other words find
# its variants (a word that long is a hash or an encoded blob).
QUERY_WORD_MAX_CHARS = 500


def normalize_text(text: str) -> str:
    """NFC, then casefold, then every run of non-letters and non-digits becomes one space.

    Accents are not folded: "café" and "cafe" are different words.
    """
    folded = unicodedata.normalize("NFC", text).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


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
    """`query_words` of a text already normalised."""
    seen: dict[str, int] = {}
    for position, word in enumerate(normalized.split(" ")):
        if is_query_word(word) and word not in seen:
            seen[word] = position
    ordered = sorted(seen, key=lambda word: (-len(word), seen[word]))
    return ordered[:limit]
