"""Consolidation sweeps: starting one, its status and summary, its proposals, applying and
reversing it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.common import (
    InputSerializer,
    IsoDateTimeField,
    StrictBooleanField,
    StrictFloatField,
)
from api.serializers.limits import LabelField
from dedup.policy import NEAR_THRESHOLD_RANGE
from dedup.policy.merge_gates import TIERS
from palace.models import actor_label
from review.models import Proposal, SweepJob, SweepRun
from review.selectors import sweeps as sweep_selectors

LOWEST, HIGHEST = NEAR_THRESHOLD_RANGE


class SweepRequestSerializer(InputSerializer):
    # As given: the service refuses one only of spaces (`empty_label`); "" is none.
    wing = LabelField(required=False)
    room = LabelField(required=False)
    threshold = StrictFloatField(required=False, min_value=LOWEST, max_value=HIGHEST)
    same_kind = StrictBooleanField(required=False, default=True)
    entities = StrictBooleanField(required=False, default=False)


class ApplyRequestSerializer(InputSerializer):
    threshold = StrictFloatField(min_value=LOWEST, max_value=HIGHEST)
    # The service's rule (`dedup.policy.merge_gates.tiers_chosen`), declared so the schema says it.
    tiers = serializers.ListField(
        child=serializers.ChoiceField(choices=TIERS), required=False, allow_empty=False
    )
    merge = StrictBooleanField(required=False, default=True)
    discard_below = StrictBooleanField(required=False, default=False)


class WhatIfSerializer(serializers.Serializer):
    links = serializers.IntegerField()
    merges = serializers.IntegerField()
    distinct = serializers.IntegerField(
        help_text="Judged not the same in the sample: recorded distinct, never linked."
    )


class SweepSummarySerializer(serializers.Serializer):
    tiers = serializers.DictField(child=serializers.IntegerField(), help_text="Proposals per tier.")
    if_applied_at = serializers.DictField(
        child=WhatIfSerializer(),
        help_text="By threshold (0.90 to 1.00): what applying would do, counted over the "
        "proposals still proposed whose sides stand (not those applied, discarded or recorded "
        "distinct already; a reverse proposes them again).",
    )


class OutcomeSerializer(serializers.Serializer):
    """One application of a run, explained against its what-if table."""

    batch = serializers.UUIDField()
    at = serializers.CharField(help_text="When, ISO 8601.")
    by = serializers.CharField(help_text="Who applied it.")
    threshold = serializers.FloatField()
    tiers = serializers.ListField(child=serializers.CharField())
    merge_tiers = serializers.ListField(child=serializers.CharField())
    proposed = serializers.IntegerField(help_text="Proposals at or above the threshold.")
    outcomes = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Those proposals by outcome (linked, merged, distinct, already_linked, "
        "already_distinct, gone, applied_before, discarded_before, other_tier): they add up "
        "to `proposed`.",
    )
    below = serializers.DictField(
        child=serializers.IntegerField(), help_text="Below the threshold: distinct, discarded."
    )
    explained = serializers.CharField()


class ProposalSerializer(serializers.ModelSerializer):
    applied_link = serializers.IntegerField(
        source="applied_link_id", read_only=True, allow_null=True
    )

    class Meta:
        model = Proposal
        fields = ["id", "kind", "tier", "score", "gates", "texts", "status", "applied_link"]
        read_only_fields = fields


class AppliedSerializer(serializers.Serializer):
    batch = serializers.UUIDField()
    linked = serializers.IntegerField()
    merged = serializers.IntegerField()
    discarded = serializers.IntegerField()
    distinct = serializers.IntegerField(
        help_text="Judged not the same in the sample: recorded distinct, never linked."
    )
    outcome = OutcomeSerializer()
    explained = serializers.CharField()


class NotRestoredSerializer(serializers.Serializer):
    proposal = serializers.IntegerField()
    decision = serializers.IntegerField(help_text="The run's merge decision.")
    revert = serializers.IntegerField(help_text="That decision's revert, in the audit log.")
    not_restored = serializers.ListField(
        child=serializers.CharField(), help_text="What the revert could not restore, and why."
    )


class ReversedSerializer(serializers.Serializer):
    undone = serializers.IntegerField(help_text="Links and merges undone.")
    not_restored = NotRestoredSerializer(
        many=True,
        help_text="Merges undone in part: a merged-away drawer deleted since stays deleted.",
    )


class JobErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="A stable error code, as the API answers it.")
    message = serializers.CharField()
    details = serializers.DictField()


class JobOptionsSerializer(serializers.Serializer):
    """An apply's options as asked (a reverse has none)."""

    threshold = serializers.FloatField(required=False)
    tiers = serializers.ListField(
        child=serializers.CharField(), allow_null=True, required=False, help_text="null: all."
    )
    merge_tiers = serializers.ListField(child=serializers.CharField(), required=False)
    discard_below = serializers.BooleanField(required=False)


class SweepJobSerializer(serializers.ModelSerializer):
    """An Apply or a Reverse of the run, done in the background: `applied` or `reversed` (what
    the request answered when it ran in it) once done, `error` once failed."""

    # A string, not the enum of the run's statuses its values repeat: the schema's enums are named
    # by field, and a second component with the set made their names collide.
    status = serializers.CharField(read_only=True, help_text="queued, running, done or failed.")
    options = JobOptionsSerializer(read_only=True)
    requested_by = serializers.SerializerMethodField()
    applied = serializers.SerializerMethodField()
    reversed = serializers.SerializerMethodField()
    error = JobErrorSerializer(allow_null=True, read_only=True)
    created_at = IsoDateTimeField()
    started_at = IsoDateTimeField(allow_null=True)
    finished_at = IsoDateTimeField(allow_null=True)

    class Meta:
        model = SweepJob
        fields = [
            "id",
            "kind",
            "status",
            "options",
            "requested_by",
            "applied",
            "reversed",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_requested_by(self, job: SweepJob) -> str:
        return actor_label(job.requested_by)

    @extend_schema_field(AppliedSerializer(allow_null=True))
    def get_applied(self, job: SweepJob) -> dict | None:
        done = job.kind == SweepJob.Kind.APPLY and job.status == SweepJob.Status.DONE
        return AppliedSerializer(job.result).data if done else None

    @extend_schema_field(ReversedSerializer(allow_null=True))
    def get_reversed(self, job: SweepJob) -> dict | None:
        done = job.kind == SweepJob.Kind.REVERSE and job.status == SweepJob.Status.DONE
        return ReversedSerializer(job.result).data if done else None


class SweepSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Proposals per tier."
    )
    summary = serializers.SerializerMethodField()
    applications = OutcomeSerializer(many=True, read_only=True)
    job = serializers.SerializerMethodField(
        help_text="The latest Apply or Reverse asked for (null if none): poll until it is done "
        "or failed."
    )
    created_at = IsoDateTimeField()
    finished_at = IsoDateTimeField(allow_null=True)

    class Meta:
        model = SweepRun
        fields = [
            "id",
            "status",
            "wing",
            "room",
            "threshold",
            "same_kind",
            "entities",
            "done",
            "total",
            "compared",
            "progress",
            "counts",
            "summary",
            "applications",
            "job",
            "error",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_progress(self, run: SweepRun) -> float:
        return round(run.progress, 4)

    @extend_schema_field(SweepSummarySerializer(allow_null=True))
    def get_summary(self, run: SweepRun) -> dict | None:
        if run.status != SweepRun.Status.DONE:
            return None
        return SweepSummarySerializer(sweep_selectors.summary(run)).data

    @extend_schema_field(SweepJobSerializer(allow_null=True))
    def get_job(self, run: SweepRun) -> dict | None:
        job = sweep_selectors.latest_job(run)
        return None if job is None else SweepJobSerializer(job).data


class SweepListedSerializer(SweepSerializer):
    """A run in `GET /api/sweeps`: as its detail gives it but the summary (what applying would
    do, counted over its proposals: one query a run), which its detail gives."""

    class Meta(SweepSerializer.Meta):
        fields = [field for field in SweepSerializer.Meta.fields if field != "summary"]
        read_only_fields = fields
