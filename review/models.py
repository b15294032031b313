"""Consolidation sweeps: a run finds duplicates already in the store and writes proposals into
quarantine. Nothing is linked or merged until the run is applied, and an applied run can be
reversed in bulk."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from palace.models import Drawer, DrawerLink, Entity, EntityLink, Room

# A run's statuses while it holds its scope (`one_unfinished_sweep_per_scope`).
UNFINISHED_RUNS = ("queued", "running")


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
    applications = models.JSONField(
        default=list,
        blank=True,
        help_text="Each application's outcome, explained against the what-if table.",
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            # One unfinished run of a scope at a time: a start submitted twice (a double click
            # whose page script did not run, a client's retry) is refused by the database, even
            # when both arrive at once (`sweeps.start`).
            models.UniqueConstraint(
                fields=["wing", "room", "entities"],
                condition=models.Q(status__in=UNFINISHED_RUNS),
                name="one_unfinished_sweep_per_scope",
            ),
        ]

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


# A job's statuses while it holds its run (`one_unfinished_job_per_run`).
UNFINISHED_JOBS = ("queued", "running")


class SweepJob(models.Model):
    """An Apply or a Reverse of a run, asked for by a curator and done by a worker
    (`review.tasks.run_sweep_job`), so a request answers at once however many merges it makes.
    The options and the asker are recorded when it is queued; the worker calls the same service
    the commands call, as that user. One job of a run is queued or running at a time, held by
    the database (`one_unfinished_job_per_run`); a failed one holds nothing, so it can be asked
    for again."""

    class Kind(models.TextChoices):
        APPLY = "apply"
        REVERSE = "reverse"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(  # indexed by sweep_job_run (run, -id)
        SweepRun, on_delete=models.CASCADE, related_name="jobs", db_index=False
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    options = models.JSONField(
        default=dict, blank=True, help_text="An apply's threshold, tiers, merge, discard_below."
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    result = models.JSONField(
        null=True, blank=True, help_text="What the service returned, as the API answers it."
    )
    error = models.JSONField(
        null=True, blank=True, help_text="Why it failed: code, message, details."
    )
    task_id = models.CharField(max_length=64, blank=True, help_text="Its task, in the queue.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            # An apply or reverse sent twice, or both at once, is refused by the database
            # (`sweep_jobs.queue`), not only by the page's buttons.
            models.UniqueConstraint(
                fields=["run"],
                condition=models.Q(status__in=UNFINISHED_JOBS),
                name="one_unfinished_job_per_run",
            ),
        ]
        indexes = [models.Index(fields=["run", "-id"], name="sweep_job_run")]

    def __str__(self) -> str:
        return f"{self.kind} of sweep {self.run_id} ({self.status})"

    @property
    def unfinished(self) -> bool:
        return self.status in UNFINISHED_JOBS


class SweepPart(models.Model):
    """One task of a run: a scope (a room; a diary per agent; all entities) and a range of ids
    in it (`low_pk` <= id < `high_pk`). Parts run in parallel in any number of workers; each
    batch of a part commits its proposals with `last_pk`, `done`, `compared` and `counts`, so a
    crashed part resumes after the last batch it committed. The run's progress is the sum of
    its parts'."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(  # indexed by sweep_part_unique_number (run, number)
        SweepRun, on_delete=models.CASCADE, related_name="parts", db_index=False
    )
    number = models.PositiveIntegerField()
    room = models.ForeignKey(
        Room, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    agent = models.CharField(max_length=150, null=True, blank=True, help_text="A diary's agent.")
    low_pk = models.BigIntegerField()
    high_pk = models.BigIntegerField()
    last_pk = models.BigIntegerField(default=0, help_text="The last id its committed batches did.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    compared = models.PositiveBigIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="sweep_part_unique_number")
        ]

    def __str__(self) -> str:
        return f"part {self.number} of sweep {self.run_id} ({self.status})"


class Proposal(models.Model):
    """A pair a sweep found, as it was found: tier, score, gates and both texts.

    The pair is held by the foreign keys of its kind (`newer_drawer`/`older_drawer` or
    `newer_entity`/`older_entity`), the link applying it made by `applied_drawer_link` or
    `applied_entity_link`; the other kind's are empty. A deleted side or link is set to null
    rather than deleting the proposal: the proposal is the record of what the run found (its
    texts are frozen as they were) and its verdict measures the run's precision, which a later
    deletion must not rewrite. A proposal with a side gone is never applied.
    """

    class Kind(models.TextChoices):
        DRAWER = "drawer"
        ENTITY = "entity"

    class Status(models.TextChoices):
        PROPOSED = "proposed"
        LINKED = "linked"
        MERGED = "merged"
        DISCARDED = "discarded"
        DISTINCT = "distinct", "judged not the same: recorded distinct"

    # The run and the newer sides are indexed by the constraints and the index that lead with
    # them (below): one index fewer each to write per proposal.
    run = models.ForeignKey(
        SweepRun, on_delete=models.CASCADE, related_name="proposals", db_index=False
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    newer_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    older_drawer = models.ForeignKey(
        Drawer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    newer_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    older_entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tier = models.CharField(max_length=16)
    score = models.FloatField()
    gates = models.JSONField(default=dict)
    texts = models.JSONField(default=dict, help_text="Both sides as they were when proposed.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    applied_drawer_link = models.ForeignKey(
        DrawerLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    applied_entity_link = models.ForeignKey(
        EntityLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sampled = models.BooleanField(default=False, help_text="Drawn for review to measure precision.")
    verdict = models.CharField(
        max_length=8, blank=True, choices=[("same", "the same"), ("wrong", "not the same")]
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["newer_drawer", "older_drawer"], name="proposal_unique_drawer_pair"
            ),
            models.UniqueConstraint(
                fields=["newer_entity", "older_entity"], name="proposal_unique_entity_pair"
            ),
            models.CheckConstraint(
                condition=Q(
                    kind="drawer",
                    newer_entity__isnull=True,
                    older_entity__isnull=True,
                    applied_entity_link__isnull=True,
                )
                | Q(
                    kind="entity",
                    newer_drawer__isnull=True,
                    older_drawer__isnull=True,
                    applied_drawer_link__isnull=True,
                ),
                name="proposal_sides_of_its_kind",
            ),
        ]
        indexes = [models.Index(fields=["run", "status", "-score"], name="proposal_run_status")]

    def __str__(self) -> str:
        return f"{self.kind} {self.newer_pk} ~ {self.older_pk} ({self.tier} {self.score:.3f})"

    @property
    def item(self) -> str:
        """Its review item's id (`review.items.ItemRef`): "p12"."""
        return f"p{self.pk}"

    @property
    def newer_pk(self) -> int | None:
        """The internal id of the newer side, of either kind; None once it is deleted."""
        return self.newer_drawer_id if self.kind == self.Kind.DRAWER else self.newer_entity_id

    @property
    def older_pk(self) -> int | None:
        return self.older_drawer_id if self.kind == self.Kind.DRAWER else self.older_entity_id

    @property
    def applied_link_id(self) -> int | None:
        """The id of the link applying the proposal made, of either kind."""
        if self.kind == self.Kind.DRAWER:
            return self.applied_drawer_link_id
        return self.applied_entity_link_id

    @property
    def similarity(self) -> float:
        """The score, under the name the review queue sorts links by."""
        return self.score


class ItemHold(models.Model):
    """A curator's short claim on a review item while they look at it, so that two curators are
    not served the same item: others see it as taken and the queue's "next" passes it by.

    Advisory, not a lock: anyone may still open and decide a held item, and the decision's own
    check (409 for an item already decided) stays the final guard. One row per item (the unique
    key makes taking a hold an upsert that two workers cannot both win); an expired row is
    ignored by every read and deleted lazily by the next take. Not audited: a hold decides
    nothing and changes nothing in the palace.
    """

    item = models.CharField(max_length=24, unique=True, help_text='A review item id, like "d12".')
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.item} held by {self.curator_id} until {self.expires_at:%H:%M:%S}"


class ConsolePreferences(models.Model):
    """A user's settings for the console, kept across sessions (and copied into the session at
    login, so that pages read them without a query)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preferences"
    )
    single_key_shortcuts = models.BooleanField(
        default=True,
        help_text="Letter keys decide and move (a, m, d, x, j, k, u). Off for speech input or "
        "a keyboard that types letters by accident (WCAG 2.1.4).",
    )

    class Meta:
        verbose_name_plural = "console preferences"

    def __str__(self) -> str:
        return f"console preferences of {self.user_id}"


class UndoOffer(models.Model):
    """An Undo the console showed a curator and that they have not used yet
    (`review.views.offers`): a row each, so two tabs deciding at once both keep theirs (a list
    in the session was written back whole by each request, and the last one won). Using one is
    deleting it, which one request alone can do. Not audited: it decides nothing."""

    # No index of its own: the unique constraint's, which leads with it, serves its lookups.
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    named = models.CharField(max_length=64, help_text='"decision:12" or "batch:<uuid>".')
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["curator", "named"], name="one_undo_offer_per_name")
        ]

    def __str__(self) -> str:
        return f"undo {self.named} offered to {self.curator_id}"
