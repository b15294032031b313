"""The write path. Every drawer, mention, alias, supersession, deletion and checkpoint is written
here, by the API, the admin, and the management commands alike.

Each public function owns one transaction: the candidate queries, the verdicts, the rows, the links
and the audit entry commit together or not at all. The modules, by concern:

- `config`: the settings a write runs under (`DedupConfig`), who writes (`WriteMode`), who acts.
- `rooms`: wings and rooms, created on first use; renamed, moved and deleted with an audit row.
- `drawers`: the write path, `drawer_write`, phase by phase.
- `drawer_changes`: links, supersessions and deletions of stored drawers.
- `similarity`: a text's candidates and their verdicts (the write path's and the sweeps').
- `inserts`: the hand-written INSERT of a new drawer and its links (the hot path).
- `entities`: entity resolution and mentions (and the aliases sightings converged by).
- `entity_aliases`: aliases recorded by hand (the API's, an import's, a curator's).
- `checkpoints`: batches written under a client-chosen id.

Callers import from here (`from dedup import services`), not from the modules.
"""

from dedup import policy  # noqa: F401 - reached as `services.policy` by callers of the write path
from dedup.services.checkpoints import (
    CHECKPOINT_NAMESPACE,
    DIARY_ROOM,
    ENTRIES_ROOM,
    CheckpointItem,
    CheckpointResult,
    Destination,
    checkpoint_payload_hash,
    checkpoint_write,
)
from dedup.services.config import Actor, DedupConfig, WriteMode
from dedup.services.drawer_changes import (
    LINK_FIELDS,
    MENTION_FIELDS,
    drawer_delete,
    drawer_link,
    drawer_snapshot,
    drawer_supersede,
    link_kept,
    mention_kept,
    refuse_across_wings,
    wings_of_rooms,
)
from dedup.services.drawers import (
    DrawerCheck,
    DrawerWrite,
    drawer_check,
    drawer_check_at,
    drawer_write,
    drawer_write_in,
)
from dedup.services.entities import (
    EntityResolution,
    MentionWrite,
    canonical_entities,
    canonical_entity,
    entity_resolve,
    known_entities,
    mention_add,
)
from dedup.services.entity_aliases import (
    entity_alias_add,
    entity_alias_remove,
    index_person_alias,
)
from dedup.services.entity_relinks import Windows, current_again_counted, entity_relinked
from dedup.services.rooms import (
    room_change,
    room_delete,
    room_get_or_create,
    rooms_move,
    wing_delete,
    wing_delete_if_empty,
    wing_rename,
)
from dedup.services.similarity import MAX_LINKS_PER_WRITE, assess_candidates, candidates_for_text

__all__ = [
    "CHECKPOINT_NAMESPACE",
    "DIARY_ROOM",
    "ENTRIES_ROOM",
    "LINK_FIELDS",
    "MAX_LINKS_PER_WRITE",
    "MENTION_FIELDS",
    "Actor",
    "CheckpointItem",
    "CheckpointResult",
    "DedupConfig",
    "Destination",
    "DrawerCheck",
    "DrawerWrite",
    "EntityResolution",
    "MentionWrite",
    "Windows",
    "WriteMode",
    "assess_candidates",
    "candidates_for_text",
    "canonical_entities",
    "canonical_entity",
    "checkpoint_payload_hash",
    "checkpoint_write",
    "current_again_counted",
    "drawer_check",
    "drawer_check_at",
    "drawer_delete",
    "drawer_link",
    "drawer_snapshot",
    "drawer_supersede",
    "drawer_write",
    "drawer_write_in",
    "entity_alias_add",
    "entity_alias_remove",
    "entity_relinked",
    "entity_resolve",
    "index_person_alias",
    "known_entities",
    "link_kept",
    "mention_add",
    "mention_kept",
    "refuse_across_wings",
    "room_change",
    "room_delete",
    "room_get_or_create",
    "rooms_move",
    "wing_delete",
    "wing_delete_if_empty",
    "wing_rename",
    "wings_of_rooms",
]
