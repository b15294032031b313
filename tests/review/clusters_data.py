"""Clusters for the tests: five restatements of one fact, and four spellings of one person."""

from dedup import services as write
from palace.models import Entity, EntityLink

FACT = "The curator prefers dark mode in the editor and in the terminal, always."
RESTATEMENTS = [
    FACT,
    FACT.replace("always", "alway"),
    FACT.replace("curator", "curater"),
    FACT.replace("terminal", "terminals"),
    FACT.replace("editor", "editors"),
]
ADA = ["Ada", "Ada L.", "Ada Lovelace", "A. Lovelace"]


def five_drawers():
    """Five near restatements in one room, each linked to the older ones (ten open links)."""
    room = write.room_get_or_create(wing="people", room="preferences")
    return [write.drawer_write(room=room, content=text).drawer for text in RESTATEMENTS]


def ada_entities():
    """Four spellings of Ada Lovelace linked possibly_same_as: a chain, and the first to the
    third and the fourth (five links; the detector makes one of them itself)."""
    people = [write.entity_resolve(name=name, kind="person").entity for name in ADA]
    for older, newer, similarity in (
        (0, 1, 0.8),
        (1, 2, 0.78),
        (2, 3, 0.82),
        (0, 2, 0.76),
        (0, 3, 0.5),
    ):
        EntityLink.objects.get_or_create(
            older=people[older],
            newer=people[newer],
            defaults={"similarity": similarity, "distance": 2},
        )
    return [Entity.objects.get(pk=p.pk) for p in people]
