"""Imports: one batch of records brought in from another memory store, undone as one."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from palace.models.drawers import Drawer, DrawerLink
from palace.models.entities import Mention


class Import(models.Model):
    """An import of a file or a directory tree: who ran it, from where, how far it got, what it
    counted, and exactly what it stored (the drawers it created, the links they made and the
    mentions it recorded), so that reversing it removes exactly that."""

    class Format(models.TextChoices):
        MEMPALACE = "mempalace"
        MEM0 = "mem0"
        CASTELLAN = "castellan"
        JSONL = "jsonl"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        REVERSED = "reversed"

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    source = models.CharField(max_length=500, help_text="The path or upload imported.")
    format = models.CharField(max_length=16, choices=Format.choices)
    options = models.JSONField(
        default=dict, blank=True, help_text="The wing and the field mapping it ran with."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveIntegerField(default=0, help_text="Records read so far.")
    summary = models.JSONField(
        default=dict, blank=True, help_text="{files, records, created, exact, similar, malformed}"
    )
    errors = models.JSONField(
        default=list, blank=True, help_text="The malformed records: file, line and why."
    )
    upload = models.TextField(
        blank=True, editable=False, help_text="A file sent over the API, kept until it is read."
    )
    drawers = models.ManyToManyField(Drawer, blank=True, related_name="imports")
    links = models.ManyToManyField(DrawerLink, blank=True, related_name="imports")
    # The mentions a Castellan file's lines recorded on its drawers: a reversal tells them from
    # later work by this, not by time (an unfinished import has no end to compare with).
    mentions = models.ManyToManyField(Mention, blank=True, related_name="imports")
    # The drawers its records found already stored (an exact copy, or the same record imported
    # before) that it did not create: reversing the import that created one hands it over to this
    # one rather than removing a record this import counted as stored.
    found = models.ManyToManyField(Drawer, blank=True, related_name="found_by_imports")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.format}) {self.source}"
