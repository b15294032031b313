"""What sweep tests write: drawers stored as a store filled before deduplication would hold them
(exact copies and near variants side by side, no links), for a sweep to find."""

from dedup import services as write
from dedup.services import DedupConfig
from palace.models import Drawer, Room

OFF = DedupConfig(enabled=False, near_threshold=0.9, entity_fuzzy=False)


def legacy(room: Room, content: str) -> Drawer:
    """A drawer written with deduplication off, as mined: stored whatever the room holds."""
    return write.drawer_write(
        room=room, content=content, mode=write.WriteMode.MINED, config=OFF
    ).drawer
