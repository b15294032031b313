"""Drawers stored as a bulk load stores them (no write path), for the candidate tests."""

from dedup import policy
from palace.models import Drawer


def bulk_drawers(room, texts) -> list[Drawer]:
    """The texts as drawers of the room, with the columns the write path derives."""
    return Drawer.objects.bulk_create(
        Drawer(
            room=room,
            content=text,
            content_hash=policy.content_hash(text),
            normalized_content=policy.normalize_text(text),
            fingerprint=policy.fingerprint(text),
        )
        for text in texts
    )
