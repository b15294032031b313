"""Consolidation sweeps: a run finds duplicates already in the store and writes proposals into
quarantine. Nothing is linked or merged until the run is applied, and an applied run can be
reversed in bulk."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class SweepRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    wing = models.CharField(max_length=100, blank=True)
    room = models.CharField(max_length=100, blank=True)
    threshold = models.FloatField()
    same_kind = models.BooleanField(default=True, help_text="Skip pairs whose memory kinds differ.")
    entities = models.BooleanField(default=False, help_text="Sweep entities instead of drawers.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    compared = models.PositiveBigIntegerField(default=0, help_text="Pairs compared.")
    counts = models.JSONField(default=dict, blank=True, help_text="Proposals per tier.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        scope = "/".join(p for p in (self.wing, self.room) if p) or "whole palace"
        return f"sweep {self.pk} of {'entities' if self.entities else scope} ({self.status})"

    @property
    def progress(self) -> float:
        return (
            1.0
            if self.status == self.Status.DONE
            else (self.done / self.total if self.total else 0.0)
        )


class Proposal(models.Model):
    """A pair a sweep found, as it was found: tier, score, gates and both texts."""

    class Kind(models.TextChoices):
        DRAWER = "drawer"
        ENTITY = "entity"

    class Status(models.TextChoices):
        PROPOSED = "proposed"
        LINKED = "linked"
        MERGED = "merged"
        DISCARDED = "discarded"

    run = models.ForeignKey(SweepRun, on_delete=models.CASCADE, related_name="proposals")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    newer_id = models.BigIntegerField()
    older_id = models.BigIntegerField()
    tier = models.CharField(max_length=16)
    score = models.FloatField()
    gates = models.JSONField(default=dict)
    texts = models.JSONField(default=dict, help_text="Both sides as they were when proposed.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    applied_link = models.BigIntegerField(null=True, blank=True)
    sampled = models.BooleanField(default=False, help_text="Drawn for review to measure precision.")
    verdict = models.CharField(
        max_length=8, blank=True, choices=[("same", "the same"), ("wrong", "not the same")]
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "newer_id", "older_id"], name="proposal_unique_pair"
            ),
        ]
        indexes = [models.Index(fields=["run", "status", "-score"], name="proposal_run_status")]

    def __str__(self) -> str:
        return f"{self.kind} {self.newer_id} ~ {self.older_id} ({self.tier} {self.score:.3f})"

    @property
    def similarity(self) -> float:
        """The score, under the name the review queue sorts links by."""
        return self.score
