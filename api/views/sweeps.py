"""Consolidation sweeps through the API. A sweep only proposes; applying is a curator's act."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.errors import errors
from api.pagination import NewestFirst
from api.permissions import CanDecide, ScopedAccess
from api.serializers import sweeps as s
from api.views.common import body_checked, one_of, parsed, sweep_or_404
from dedup.policy.merge_gates import MERGE_TIERS, TIERS
from review.models import Proposal, SweepJob, SweepRun
from review.selectors import sweeps as sweep_selectors
from review.services import sweep_jobs
from review.services import sweeps as sweep_services
from review.tasks import run_sweep, run_sweep_job


class SweepListView(GenericAPIView):
    permission_classes = [CanDecide]
    decide_act = "Starting a sweep"
    pagination_class = NewestFirst
    serializer_class = s.SweepListedSerializer

    @extend_schema(
        responses={200: s.SweepListedSerializer(many=True), **errors(401, paginated=True)}
    )
    def get(self, request: Request) -> Response:
        """Every run, newest first, each as `GET /api/sweeps/{id}` gives it but its `summary`
        (its detail's). A run whose job's worker stopped shows it failed, as its detail does."""
        rows = self.paginate_queryset(sweep_selectors.runs_listed()) or []
        for run in rows:
            job = sweep_selectors.latest_job(run)
            if job is not None and job.status == SweepJob.Status.RUNNING:  # rarely any
                sweep_jobs.stopped_settled(run)
                job.refresh_from_db()  # the page's own copy
        return self.get_paginated_response(self.get_serializer(rows, many=True).data)

    @extend_schema(
        request=s.SweepRequestSerializer,
        responses={
            202: OpenApiResponse(s.SweepSerializer, description="Queued."),
            **errors(400, 401, 403, 409),
        },
    )
    def post(self, request: Request) -> Response:
        """Start a sweep in the background (`manage.py db_worker` runs it). It only proposes. A
        scope being swept already is refused (409 `sweep_under_way`, `details.run`)."""
        data = parsed(s.SweepRequestSerializer, request)
        run = sweep_services.start(
            wing=data.get("wing", ""),
            room=data.get("room", ""),
            threshold=data.get("threshold", settings.CASTELLAN_DEDUP_NEAR_THRESHOLD),
            same_kind=data["same_kind"],
            entities=data["entities"],
            actor=request.user,
        )
        run_sweep.enqueue(run.pk)
        run.refresh_from_db()
        return Response(s.SweepSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class SweepDetailView(APIView):
    permission_classes = [ScopedAccess]

    @extend_schema(
        responses={
            200: OpenApiResponse(s.SweepSerializer, description="Status, progress, counts."),
            **errors(401, 404),
        }
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = sweep_or_404(run_id)
        sweep_jobs.stopped_settled(run)  # a job whose worker stopped is shown failed
        return Response(s.SweepSerializer(run).data)


class SweepProposalsView(GenericAPIView):
    permission_classes = [ScopedAccess]
    pagination_class = NewestFirst
    serializer_class = s.ProposalSerializer

    @extend_schema(
        parameters=[OpenApiParameter("tier", str), OpenApiParameter("status", str)],
        responses={200: s.ProposalSerializer(many=True), **errors(401, paginated=True)},
    )
    def get(self, request: Request, run_id: int) -> Response:
        """The run's proposals."""
        run = sweep_or_404(run_id)
        tier = one_of(request, "tier", TIERS)
        wanted = one_of(request, "status", Proposal.Status.values)
        rows = self.paginate_queryset(sweep_selectors.proposals_for(run, tier=tier, status=wanted))
        return self.get_paginated_response(self.get_serializer(rows, many=True).data)


QUEUED = (
    "Queued: the sweep, whose `job` says how it goes (queued, running, then done with its "
    "outcome or failed with its error); poll `GET /api/sweeps/{id}` (the `Location`)."
)


def _job_queued(run: SweepRun) -> Response:
    """202 with the run (its `job` the one just queued), and where to poll it."""
    response = Response(s.SweepSerializer(run).data, status=status.HTTP_202_ACCEPTED)
    response["Location"] = reverse("api:sweep-detail", args=[run.pk])
    return response


class SweepApplyView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Applying a sweep"

    @extend_schema(
        request=s.ApplyRequestSerializer,
        responses={
            202: OpenApiResponse(s.SweepSerializer, description=QUEUED),
            **errors(400, 401, 403, 404, 409),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Apply the run at a threshold, in the background (`manage.py db_worker` does it as
        the user who asked). Refused at once as the apply itself would be where that can be
        known (409 `run_not_done`, `nothing_to_apply`; 400 for a threshold or tier), and while
        an apply or reverse of the run is queued or running (409 `application_under_way`).
        The outcome (`job.applied`) is what this answered when it applied in the request."""
        run = sweep_or_404(run_id)
        data = parsed(s.ApplyRequestSerializer, request)
        sweep_services.apply_queue(
            run,
            threshold=data["threshold"],
            tiers=data.get("tiers"),
            merge_tiers=MERGE_TIERS if data["merge"] else (),
            discard_below=data["discard_below"],
            actor=request.user,
            queue=run_sweep_job.enqueue,
        )
        return _job_queued(run)


class SweepReverseView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Reversing a sweep"

    @extend_schema(
        request=None,
        responses={
            202: OpenApiResponse(s.SweepSerializer, description=QUEUED),
            **errors(401, 403, 404, 409),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Undo everything the run applied, in the background. Refused at once when nothing is
        applied (409 `run_not_applied`) and while an apply or reverse of the run is queued or
        running (409 `application_under_way`). The outcome is `job.reversed`."""
        body_checked(request)
        run = sweep_or_404(run_id)
        sweep_services.reverse_queue(run, actor=request.user, queue=run_sweep_job.enqueue)
        return _job_queued(run)


class SweepResumeView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Resuming a sweep"

    @extend_schema(
        request=None,
        responses={
            202: OpenApiResponse(s.SweepSerializer, description="Queued again."),
            **errors(401, 403, 404, 409),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Go on with a run a stopped worker left queued, running or failed: each unfinished
        part resumes after its last committed batch (a run being worked on is not disturbed:
        its parts' batches are taken under their row locks). A finished run is 409, as is one
        a worker has, or that waits for one (`sweep_under_way`)."""
        body_checked(request)
        run = sweep_services.queue_resumed(sweep_or_404(run_id).pk, run_sweep.enqueue)
        return Response(s.SweepSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class SweepCancelView(APIView):
    permission_classes = [CanDecide]
    decide_act = "Cancelling a sweep's Apply or Reverse"

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(s.SweepSerializer, description="Cancelled: `job` failed."),
            **errors(401, 403, 404, 409),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        """Cancel the run's Apply or Reverse while it waits for a worker: its `job` failed
        (`error.code` `cancelled`), nothing of it done, and the run takes another. 409
        `job_running` once a worker does it (all of it or none), `no_job_waiting` for none."""
        body_checked(request)
        run = sweep_or_404(run_id)
        sweep_services.job_cancel(run, actor=request.user)
        return Response(s.SweepSerializer(run).data)
