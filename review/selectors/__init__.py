"""Reads for the review console, by concern: the queue (`filters`, `queue`), one item with its
evidence (`items`), the audit log (`audit`), the detector's measured precision (`stats`) and a
sweep's proposals (`sweeps`). The names below are the interface the views and the API use."""

from review.selectors import sweeps
from review.selectors.audit import (
    AuditFilters,
    audit_entries,
    batch_decisions,
    last_decision,
    not_reverted,
    reverted_ids,
    sees_deleted_content,
    without_deleted_content,
)
from review.selectors.filters import (
    DRAWER_RULES,
    ENTITY_RULES,
    ORDERS,
    PROPOSAL_RULES,
    STATUSES,
    QueueFilters,
    QueueStatus,
    drawer_links,
    entity_links,
    proposals,
    run_id,
)
from review.selectors.items import (
    SAMPLE_MENTIONS,
    DrawerItem,
    EntityItem,
    ProposalItem,
    aliases_would_settle,
    item_detail,
)
from review.selectors.queue import (
    MAX_BULK,
    PAGE_SIZE,
    QueueItem,
    QueuePage,
    next_item,
    queue_counts,
    queue_page,
    queue_refs,
)
from review.selectors.stats import BANDS, precision_stats, queue_history, similarity_band

__all__ = [
    "BANDS",
    "DRAWER_RULES",
    "ENTITY_RULES",
    "MAX_BULK",
    "ORDERS",
    "PAGE_SIZE",
    "PROPOSAL_RULES",
    "SAMPLE_MENTIONS",
    "STATUSES",
    "AuditFilters",
    "DrawerItem",
    "EntityItem",
    "ProposalItem",
    "QueueFilters",
    "QueueItem",
    "QueuePage",
    "QueueStatus",
    "aliases_would_settle",
    "audit_entries",
    "batch_decisions",
    "drawer_links",
    "entity_links",
    "item_detail",
    "last_decision",
    "next_item",
    "not_reverted",
    "precision_stats",
    "proposals",
    "queue_counts",
    "queue_history",
    "queue_page",
    "queue_refs",
    "reverted_ids",
    "run_id",
    "sees_deleted_content",
    "similarity_band",
    "sweeps",
    "without_deleted_content",
]
