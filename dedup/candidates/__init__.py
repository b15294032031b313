"""Candidate queries: which stored rows might a new drawer or name duplicate? The database only
proposes; `dedup.policy` decides. Drawers (full-text and indexed lookups, per database) and
entities (indexed lookups by key), one module each; every query is importable from here."""

from dedup.candidates.drawers import (
    ANY_LENGTH,
    EXACT_CANDIDATES,
    GROUP_MATCHES,
    LEXICAL_CANDIDATES,
    LEXICAL_GROUP_SIZE,
    LEXICAL_GROUPS,
    POSTGRESQL_FUNCTION,
    POSTGRESQL_FUNCTION_NAME,
    POSTGRESQL_FUNCTION_REMOVE,
    SQLITE_RANKED_MATCHES,
    STOP_WORDS,
    SWEEP_LEXICAL_GROUPS,
    Candidate,
    Found,
    LengthBand,
    Scope,
    for_text,
    lexical,
    lexical_groups,
    lexical_words,
    same_fingerprint,
    same_hash,
)
from dedup.candidates.entities import (
    entities_matching,
    entities_within_reach,
    person_aliases_within_reach,
)
from dedup.candidates.room_words import common_words, rare_first

__all__ = [
    "ANY_LENGTH",
    "EXACT_CANDIDATES",
    "GROUP_MATCHES",
    "LEXICAL_CANDIDATES",
    "LEXICAL_GROUPS",
    "LEXICAL_GROUP_SIZE",
    "POSTGRESQL_FUNCTION",
    "POSTGRESQL_FUNCTION_NAME",
    "POSTGRESQL_FUNCTION_REMOVE",
    "SQLITE_RANKED_MATCHES",
    "STOP_WORDS",
    "SWEEP_LEXICAL_GROUPS",
    "Candidate",
    "Found",
    "LengthBand",
    "Scope",
    "common_words",
    "entities_matching",
    "entities_within_reach",
    "for_text",
    "lexical",
    "lexical_groups",
    "lexical_words",
    "person_aliases_within_reach",
    "rare_first",
    "same_fingerprint",
    "same_hash",
]
