"""Which current drawers a text resembles: its candidates (one round trip) and their verdicts,
for the write path and the sweeps alike."""

from __future__ import annotations

from typing import cast

from dedup import candidates, policy
from dedup.services.config import DedupConfig

MAX_LINKS_PER_WRITE = 5

Assessed = list[tuple[candidates.Candidate, policy.Assessment]]


def candidates_for_text(
    scope: candidates.Scope,
    text: policy.Text,
    *,
    threshold: float,
    lock: int | None = None,
    groups: int = candidates.LEXICAL_GROUPS,
) -> candidates.Found:
    """Every candidate of a text in its scope, in one round trip (the write path's and the
    sweeps'), read once `lock` is held. A short text can only be exact or normalized, so it gets
    no lexical query; the lexical query, there to find near texts, asks only for lengths that
    can be near at `threshold`, with `groups` pairs of the text's words."""
    lengths = candidates.near_lengths(text, threshold)
    if lengths is None:
        return candidates.for_text(scope, text.content_hash, text.fingerprint, [], lock=lock)
    return candidates.for_text(
        scope,
        text.content_hash,
        text.fingerprint,
        [],
        lock=lock,
        lengths=lengths,
        # The room's rarer words first (its template words match every drawer of it), and pairs
        # of its real words that a corruption of the others leaves intact.
        word_groups=candidates.query_groups(
            scope.room.id, policy.query_words_of_normalized(text.normalized), groups, lock=lock
        ),
    )


def assess_candidates(text: policy.Text, found: candidates.Found, config: DedupConfig) -> Assessed:
    """Judge the bounded set of candidates and keep the strongest verdicts, strongest first."""
    pool: dict[int, candidates.Candidate] = {c.id: c for c in found.same}
    for candidate in found.lexical:
        pool.setdefault(candidate.id, candidate)

    assessed = []
    for candidate in pool.values():
        old = policy.Text(
            candidate.content_hash, candidate.normalized_content, candidate.fingerprint
        )
        if not policy.may_have_verdict(text, old, threshold=config.near_threshold):
            continue
        assessment = policy.assess(text, old, threshold=config.near_threshold)
        if assessment.verdict is not None:
            assessed.append((candidate, assessment))
    assessed.sort(
        key=lambda pair: (
            # Only pairs with a verdict were kept.
            -cast(policy.Verdict, pair[1].verdict).strength,
            -pair[1].signals.similarity,
            pair[0].id,
        )
    )
    return assessed[:MAX_LINKS_PER_WRITE]
