"""Wings and rooms: created on first use, by whichever write names them."""

from __future__ import annotations

from django.db import transaction

from dedup.validation import clean_label
from palace.models import Room, Wing


def room_get_or_create(*, wing: str, room: str) -> Room:
    """Wings and rooms are created on first use."""
    wing_name = clean_label(wing, "wing")
    room_name = clean_label(room, "room")
    with transaction.atomic():
        wing_obj, _ = Wing.objects.get_or_create(name=wing_name)
        room_obj, _ = Room.objects.get_or_create(wing=wing_obj, name=room_name)
    return room_obj
