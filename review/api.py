"""The review console's API: the same queue, decisions, audit log and statistics as the pages,
through the same services, with the core API's error shape and codes."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dedup.api.errors import not_found
from dedup.api.views import ERRORS, NewestFirst, parsed
from review import selectors, services, sweeps
from review.models import SweepRun
from review.tasks import run_sweep

DECIDE_PERMISSION = "palace.decide"


class CanDecide(permissions.BasePermission):
    """Reading is for every signed-in user; deciding needs the curators' permission."""

    message = "Deciding review items needs the curators' decide permission."

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return request.user.has_perm(DECIDE_PERMISSION)


def side(obj) -> dict:
    if hasattr(obj, "content"):
        return {
            "id": str(obj.uuid),
            "content": obj.content,
            "wing": obj.room.wing.name,
            "room": obj.room.name,
            "agent": obj.agent,
            "is_current": obj.valid_to is None,
            "created_at": obj.created_at.isoformat(),
        }
    return {"id": str(obj.uuid), "name": obj.name, "kind": obj.kind, "key": obj.key}


def item_payload(item: selectors.QueueItem) -> dict:
    link = item.link
    if item.ref.is_proposal:
        return {
            "id": item.id,
            "type": "proposal",
            "run": link.run_id,
            "status": link.status,
            "verdict": link.verdict,
            "similarity": link.score,
            "rule": link.tier,
            "gates": link.gates,
            "texts": link.texts,
            "created_at": link.created_at.isoformat(),
        }
    payload = {
        "id": item.id,
        "type": "similar_to" if item.is_drawer else "possibly_same_as",
        "status": link.status,
        "similarity": link.similarity,
        "created_at": link.created_at.isoformat(),
        "older": side(link.older),
        "newer": side(link.newer),
    }
    if item.is_drawer:
        payload |= {"rule": link.verdict, "signals": link.signals}
    else:
        payload |= {
            "rule": "typo candidate" if link.distance == 1 else "possible match",
            "distance": link.distance,
        }
    return payload


def decision_payload(entry, reverted: set[int]) -> dict:
    return {
        "id": entry.pk,
        "action": entry.action.removeprefix(services.DECISION_PREFIX),
        "actor": entry.actor_label,
        "created_at": entry.created_at.isoformat(),
        "item": entry.data.get("item") or entry.target_id,
        "target_type": entry.target_type,
        "target_id": entry.target_id,
        "before": entry.before,
        "after": entry.after,
        "note": entry.data.get("note", ""),
        "batch": str(entry.batch) if entry.batch else None,
        "reverted": entry.pk in reverted,
    }


class QueueSerializer(serializers.Serializer):
    items = serializers.ListField(child=serializers.DictField())
    next = serializers.CharField(allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField())


class DecisionRequestSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=[a.value for a in services.Action])
    canonical = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class RevertRequestSerializer(serializers.Serializer):
    cascade = serializers.BooleanField(required=False, default=False)
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.CharField()
    actor = serializers.CharField()
    created_at = serializers.DateTimeField()
    item = serializers.CharField()
    before = serializers.JSONField()
    after = serializers.JSONField()
    note = serializers.CharField()
    batch = serializers.UUIDField(allow_null=True)
    reverted = serializers.BooleanField()


QUEUE_PARAMETERS = [
    OpenApiParameter("type", str, enum=["drawer", "entity"]),
    OpenApiParameter("rule", str, enum=[*selectors.DRAWER_RULES, *selectors.ENTITY_RULES]),
    OpenApiParameter("wing", str),
    OpenApiParameter("room", str),
    OpenApiParameter("kind", str, description="Entity kind."),
    OpenApiParameter("min_similarity", float),
    OpenApiParameter("max_similarity", float),
    OpenApiParameter("status", str, enum=list(selectors.STATUSES)),
    OpenApiParameter("q", str, description="Text in either side."),
    OpenApiParameter("order", str, enum=list(selectors.ORDERS)),
    OpenApiParameter("cursor", str),
]


class QueueView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        parameters=QUEUE_PARAMETERS,
        responses={200: QueueSerializer, 400: ERRORS[400], 401: ERRORS[401]},
    )
    def get(self, request: Request) -> Response:
        """Open similar_to and possibly_same_as links, filtered and ordered like the page."""
        filters = selectors.QueueFilters.from_params(request.query_params)
        page = selectors.queue_page(filters, cursor=request.query_params.get("cursor"))
        return Response(
            {
                "items": [item_payload(i) for i in page.items],
                "next": page.next_cursor,
                "counts": selectors.queue_counts(filters, request.user),
            }
        )


class DecideView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        request=DecisionRequestSerializer,
        responses={
            201: DecisionSerializer,
            **{code: ERRORS[code] for code in (400, 401, 403, 404, 409)},
        },
    )
    def post(self, request: Request, item_id: str) -> Response:
        """Decide one item. A second decision on the same item is refused (409 already_decided,
        naming who decided it and when)."""
        ref = services.ItemRef.parse(item_id)
        data = parsed(DecisionRequestSerializer, request)
        entry = services.decide(
            item=ref,
            action=data["action"],
            actor=request.user,
            canonical=data.get("canonical") or None,
            note=data.get("note", ""),
            evidence={"via": "api"},
        )
        return Response(decision_payload(entry, set()), status=status.HTTP_201_CREATED)


class DecisionListView(GenericAPIView):
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = NewestFirst
    serializer_class = DecisionSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter(n, str) for n in ("actor", "action", "item", "since", "until")
        ],
        responses={200: DecisionSerializer(many=True), 400: ERRORS[400], 401: ERRORS[401]},
    )
    def get(self, request: Request) -> Response:
        """The audit log, newest first, filterable by curator, action, item and date."""
        entries = self.paginate_queryset(
            selectors.audit_entries(selectors.AuditFilters.from_params(request.query_params))
        )
        reverted = selectors.reverted_ids(entries)
        return self.get_paginated_response([decision_payload(e, reverted) for e in entries])


class RevertView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        request=RevertRequestSerializer,
        responses={
            200: OpenApiResponse(DecisionSerializer(many=True), description="The revert rows."),
            **{code: ERRORS[code] for code in (400, 401, 403, 404, 409)},
        },
    )
    def post(self, request: Request, decision_id: int) -> Response:
        """Revert a decision to the exact prior state. If later decisions depend on it, 409
        revert_blocked names them; `cascade: true` reverts them together."""
        data = parsed(RevertRequestSerializer, request) if request.data else {}
        entries = services.revert(
            decision=decision_id,
            actor=request.user,
            cascade=data.get("cascade", False),
            note=data.get("note", ""),
        )
        return Response([decision_payload(e, set()) for e in entries])


class StatsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={
            200: OpenApiResponse(description="Precision per tier and band, queue size per day.")
        }
    )
    def get(self, request: Request) -> Response:
        return Response(selectors.precision_stats())


# --- sweeps ------------------------------------------------------------------------------------


class SweepRequestSerializer(serializers.Serializer):
    wing = serializers.CharField(required=False, allow_blank=True, max_length=100)
    room = serializers.CharField(required=False, allow_blank=True, max_length=100)
    threshold = serializers.FloatField(required=False, min_value=0.5, max_value=1.0)
    same_kind = serializers.BooleanField(required=False, default=True)
    entities = serializers.BooleanField(required=False, default=False)


class ApplyRequestSerializer(serializers.Serializer):
    threshold = serializers.FloatField(min_value=0.5, max_value=1.0)
    tiers = serializers.ListField(child=serializers.CharField(), required=False)
    merge = serializers.BooleanField(required=False, default=True)
    discard_below = serializers.BooleanField(required=False, default=False)


def sweep_payload(run) -> dict:
    return {
        "id": run.pk,
        "status": run.status,
        "wing": run.wing,
        "room": run.room,
        "threshold": run.threshold,
        "same_kind": run.same_kind,
        "entities": run.entities,
        "done": run.done,
        "total": run.total,
        "compared": run.compared,
        "progress": round(run.progress, 4),
        "counts": run.counts,
        "summary": sweeps.summary(run) if run.status == "done" else None,
        "error": run.error,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def sweep_or_404(run_id: int):
    run = SweepRun.objects.filter(pk=run_id).first()
    if run is None:
        raise not_found("sweep")
    return run


class SweepListView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        request=SweepRequestSerializer,
        responses={
            202: OpenApiResponse(description="Queued."),
            **{c: ERRORS[c] for c in (400, 401, 403)},
        },
    )
    def post(self, request: Request) -> Response:
        """Start a sweep in the background (`manage.py db_worker` runs it). It only proposes."""
        data = parsed(SweepRequestSerializer, request)
        run = sweeps.start(
            wing=data.get("wing", ""),
            room=data.get("room", ""),
            threshold=data.get("threshold", settings.CASTELLAN_DEDUP_NEAR_THRESHOLD),
            same_kind=data["same_kind"],
            entities=data["entities"],
            actor=request.user,
        )
        run_sweep.enqueue(run.pk)
        run.refresh_from_db()
        return Response(sweep_payload(run), status=status.HTTP_202_ACCEPTED)


class SweepDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={200: OpenApiResponse(description="Status, progress, counts."), 404: ERRORS[404]}
    )
    def get(self, request: Request, run_id: int) -> Response:
        return Response(sweep_payload(sweep_or_404(run_id)))


class SweepProposalsView(GenericAPIView):
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = NewestFirst
    serializer_class = DecisionSerializer  # for the schema's pagination only

    @extend_schema(
        parameters=[OpenApiParameter("tier", str), OpenApiParameter("status", str)],
        responses={200: OpenApiResponse(description="The run's proposals."), 404: ERRORS[404]},
    )
    def get(self, request: Request, run_id: int) -> Response:

        run = sweep_or_404(run_id)
        rows = self.paginate_queryset(
            sweeps.proposals_for(
                run,
                tier=request.query_params.get("tier", ""),
                status=request.query_params.get("status", ""),
            )
        )
        return self.get_paginated_response(
            [
                {
                    "id": p.pk,
                    "kind": p.kind,
                    "tier": p.tier,
                    "score": p.score,
                    "gates": p.gates,
                    "texts": p.texts,
                    "status": p.status,
                    "applied_link": p.applied_link,
                }
                for p in rows
            ]
        )


class SweepApplyView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        request=ApplyRequestSerializer,
        responses={
            200: OpenApiResponse(description="Applied."),
            **{c: ERRORS[c] for c in (400, 403, 404, 409)},
        },
    )
    def post(self, request: Request, run_id: int) -> Response:

        run = sweep_or_404(run_id)
        data = parsed(ApplyRequestSerializer, request)
        done = sweeps.apply(
            run,
            threshold=data["threshold"],
            tiers=data.get("tiers"),
            merge_tiers=sweeps.MERGE_TIERS if data["merge"] else (),
            discard_below=data["discard_below"],
            actor=request.user,
        )
        return Response(
            {
                "batch": str(done.batch),
                "linked": done.linked,
                "merged": done.merged,
                "discarded": done.discarded,
            }
        )


class SweepReverseView(APIView):
    permission_classes = [permissions.IsAuthenticated, CanDecide]

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(description="Undone."),
            **{c: ERRORS[c] for c in (403, 404)},
        },
    )
    def post(self, request: Request, run_id: int) -> Response:

        return Response({"undone": sweeps.reverse(sweep_or_404(run_id), actor=request.user)})
