"""The admin's forms that write: the write path's input checks, errors beside their fields."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm

from dedup.errors import DomainError
from dedup.services.rooms import refuse_splitting_supersessions
from dedup.validation import (
    AGENT_MAX_LENGTH,
    NAME_MAX_LENGTH,
    clean_content,
    clean_kind,
    clean_place_name,
    optional_written_name,
)
from palace.models import LABEL_MAX_LENGTH, Drawer, Room, Wing


class DrawerAddForm(forms.ModelForm):
    """The add form runs the write path's own input checks (`dedup.validation`) and its one
    refusal that depends on the room (a name held by other content), so bad input is an error
    beside its field, shown with the form, not a 500 from `save_model`."""

    CHECKS = {
        "content": clean_content,
        "name": lambda value: optional_written_name(value, "name", max_length=NAME_MAX_LENGTH),
        "kind": clean_kind,
        "agent": lambda value: optional_written_name(value, "agent", max_length=AGENT_MAX_LENGTH),
    }

    class Meta:
        model = Drawer
        fields = ["room", "content", "name", "kind", "agent"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for field, check in self.CHECKS.items():
            if data.get(field) is None:  # missing, or refused by the field itself already
                continue
            try:
                data[field] = check(data[field])
            except DomainError as error:
                self.add_error(field, error.message)
        self.refuse_a_taken_name(data)
        return data

    def refuse_a_taken_name(self, data: dict[str, Any]) -> None:
        room, name = data.get("room"), data.get("name")
        if room is not None and name and "content" in data:
            named = Drawer.objects.current().filter(room=room, name=name).first()
            if named is not None and named.content != data["content"]:
                self.add_error("name", f"The room already holds a drawer named {name!r}.")


class _NamedForm(forms.ModelForm):
    """A wing's or a room's name, added or changed, checked and given its form as a write gives
    a new one (`clean_place_name`: no control characters, not one that shows nothing, no '/',
    a wing neither '*' nor holding ','; "beta\u200d" is "beta"), which the renaming services
    check again: the admin saved names the API refuses, or no key can name, and a rename's
    refusal was a 500. A row nothing was changed in keeps its name as stored (a room an import
    restored with its '/', a twin `api/0003` left apart), so its wing's other rows still save."""

    label = ""

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if self.instance.pk is not None and not self.has_changed():
            return name
        try:
            return clean_place_name(name, self.label)
        except DomainError as error:
            raise forms.ValidationError(error.message) from error


class WingForm(_NamedForm):
    label = "wing"

    class Meta:
        model = Wing
        fields = ["name"]


class RoomForm(_NamedForm):
    """A room renamed or moved; a move that would leave a supersession spanning two wings is an
    error beside the wing, said as the service says it (which checks again, under its lock)."""

    label = "room"

    class Meta:
        model = Room
        fields = ["name", "wing"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        wing, room = data.get("wing"), self.instance
        if wing is not None and room.pk is not None and room.wing_id != wing.pk:
            try:
                refuse_splitting_supersessions([room], wing)
            except DomainError as error:
                self.add_error("wing", error.message)
        return data


class RoomMoveForm(ActionForm):
    """The room list's action bar, with the wing its move action takes the rooms to."""

    # A name, not a menu of every wing (an import of mem0 makes a wing per user).
    wing = forms.CharField(required=False, max_length=LABEL_MAX_LENGTH, label="To wing")
