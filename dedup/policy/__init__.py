"""The deduplication policy: pure functions with explained verdicts. No Django here.

Thresholds are passed in, never read from settings, so every verdict can be reproduced from the
evidence stored beside it.
"""

from dedup.policy.classify import (
    DEFAULT_NEAR_THRESHOLD,
    MIN_NEAR_CHARS,
    NEAR_THRESHOLD_RANGE,
    Assessment,
    Signals,
    Text,
    Verdict,
    assess,
    classify,
    may_have_verdict,
    near_length_range,
)
from dedup.policy.entities import (
    MAX_POSSIBLE,
    MIN_POSSIBLE_KEY_CHARS,
    MIN_TYPO_KEY_CHARS,
    POSSIBLE_SIMILARITY,
    VAGUE_KIND,
    EntityCandidate,
    PossibleMatch,
    Resolution,
    Rule,
    entity_key,
    key_similarity,
    kind_matches,
    resolve,
    through_redirect,
)
from dedup.policy.similarity import (
    EDIT_DISTANCE_LIMIT,
    edit_distance,
    similarity,
    similarity_of_normalized,
)
from dedup.policy.text import (
    MAX_QUERY_WORDS,
    content_hash,
    fingerprint,
    fingerprint_of_normalized,
    normalize_text,
    query_words,
    query_words_of_normalized,
)

__all__ = [
    "DEFAULT_NEAR_THRESHOLD",
    "EDIT_DISTANCE_LIMIT",
    "MAX_POSSIBLE",
    "MAX_QUERY_WORDS",
    "MIN_NEAR_CHARS",
    "MIN_POSSIBLE_KEY_CHARS",
    "MIN_TYPO_KEY_CHARS",
    "NEAR_THRESHOLD_RANGE",
    "POSSIBLE_SIMILARITY",
    "VAGUE_KIND",
    "Assessment",
    "EntityCandidate",
    "PossibleMatch",
    "Resolution",
    "Rule",
    "Signals",
    "Text",
    "Verdict",
    "assess",
    "classify",
    "content_hash",
    "edit_distance",
    "entity_key",
    "fingerprint",
    "fingerprint_of_normalized",
    "key_similarity",
    "kind_matches",
    "may_have_verdict",
    "near_length_range",
    "normalize_text",
    "query_words",
    "query_words_of_normalized",
    "resolve",
    "similarity",
    "similarity_of_normalized",
    "through_redirect",
]
