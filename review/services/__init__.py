"""Writes of the review console, by concern: curators' decisions (`decisions`), what each action
does and how it is undone (`actions`), reverts (`reverts`) and consolidation sweeps (`sweeps`,
finding in `sweep_scan`). The names below are the interface the views, the API and the admin use;
the shared vocabulary (items, actions, errors) is `review.items`."""

from palace.models import DECISION_PREFIX
from review.items import (
    DRAWER_ACTIONS,
    ENTITY_ACTIONS,
    ITEM_TARGET,
    PROPOSAL_ACTIONS,
    REVERT_ACTION,
    Action,
    AlreadyDecided,
    InvalidAction,
    ItemKind,
    ItemRef,
    RevertBlocked,
)
from review.selectors.audit import last_decision, not_reverted
from review.selectors.items import aliases_would_settle
from review.services import sweeps
from review.services.actions import ACTIONS
from review.services.clusters import ClusterChanged, ClusterChoice, ClusterResult, decide_cluster
from review.services.decisions import (
    BulkResult,
    already_decided,
    check_item_known,
    decide,
    decide_many,
    decide_settling,
)
from review.services.drawer_merges import consolidated
from review.services.reverts import (
    check_batch_known,
    check_decision_known,
    dependents,
    last_own_decision,
    revert,
    revert_batch,
    reverts_of,
)

__all__ = [
    "ACTIONS",
    "DECISION_PREFIX",
    "DRAWER_ACTIONS",
    "ENTITY_ACTIONS",
    "ITEM_TARGET",
    "PROPOSAL_ACTIONS",
    "REVERT_ACTION",
    "Action",
    "AlreadyDecided",
    "BulkResult",
    "ClusterChanged",
    "ClusterChoice",
    "ClusterResult",
    "InvalidAction",
    "ItemKind",
    "ItemRef",
    "RevertBlocked",
    "aliases_would_settle",
    "already_decided",
    "check_batch_known",
    "check_decision_known",
    "check_item_known",
    "consolidated",
    "decide",
    "decide_cluster",
    "decide_many",
    "decide_settling",
    "dependents",
    "last_decision",
    "last_own_decision",
    "not_reverted",
    "revert",
    "revert_batch",
    "reverts_of",
    "sweeps",
]
