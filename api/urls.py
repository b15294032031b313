"""Every API path, under `api/` with the `api` namespace. The paths are what clients call:
they do not change."""

from django.urls import path, re_path

from api import openapi
from api.errors import no_such_route
from api.views import (
    checkpoints,
    clusters,
    decisions,
    diary,
    drawers,
    entities,
    imports,
    queue,
    search,
    stats,
    sweeps,
    wings,
)

app_name = "api"

schema = [
    path("schema/", openapi.schema_view, name="schema"),
    path("docs/", openapi.docs_view, name="swagger-ui"),
]

palace = [
    path("wings", wings.WingListView.as_view(), name="wing-list"),
    path("wings/<str:wing>", wings.WingDetailView.as_view(), name="wing-detail"),
    path(
        "wings/<str:wing>/rooms/<str:room>/drawers",
        drawers.RoomDrawersView.as_view(),
        name="room-drawers",
    ),
    path("drawers/<str:drawer_id>", drawers.DrawerDetailView.as_view(), name="drawer-detail"),
    path(
        "drawers/<str:drawer_id>/supersede",
        drawers.DrawerSupersedeView.as_view(),
        name="drawer-supersede",
    ),
    path(
        "drawers/<str:drawer_id>/duplicates",
        drawers.DrawerDuplicatesView.as_view(),
        name="drawer-duplicates",
    ),
    path(
        "drawers/<str:drawer_id>/mentions",
        drawers.DrawerMentionsView.as_view(),
        name="drawer-mentions",
    ),
    path("search", search.SearchView.as_view(), name="search"),
    path("diary", diary.DiaryView.as_view(), name="diary"),
    path("checkpoints", checkpoints.CheckpointView.as_view(), name="checkpoints"),
    path("entities", entities.EntityListView.as_view(), name="entity-list"),
    path("entities/<str:entity_id>", entities.EntityDetailView.as_view(), name="entity-detail"),
    path(
        "entities/<str:entity_id>/mentions",
        entities.EntityMentionsView.as_view(),
        name="entity-mentions",
    ),
    path(
        "entities/<str:entity_id>/candidates",
        entities.EntityCandidatesView.as_view(),
        name="entity-candidates",
    ),
    path(
        "entities/<str:entity_id>/aliases",
        entities.EntityAliasesView.as_view(),
        name="entity-aliases",
    ),
]

review = [
    path("review/queue", queue.QueueView.as_view(), name="review-queue"),
    path(
        "review/items/<str:item_id>/decisions",
        decisions.DecideView.as_view(),
        name="review-decide",
    ),
    path("review/decisions", decisions.DecisionListView.as_view(), name="review-decisions"),
    path(
        "review/decisions/<int:decision_id>/revert",
        decisions.RevertView.as_view(),
        name="review-revert",
    ),
    path("review/stats", stats.StatsView.as_view(), name="review-stats"),
    path("review/clusters", clusters.ClusterListView.as_view(), name="review-clusters"),
    path(
        "review/clusters/<str:item_id>",
        clusters.ClusterDetailView.as_view(),
        name="review-cluster",
    ),
    path(
        "review/clusters/<str:item_id>/decisions",
        clusters.ClusterDecideView.as_view(),
        name="review-cluster-decide",
    ),
    path(
        "review/batches/<uuid:batch_id>/revert",
        clusters.BatchRevertView.as_view(),
        name="review-batch-revert",
    ),
]

consolidation = [
    path("sweeps", sweeps.SweepListView.as_view(), name="sweep-list"),
    path("sweeps/<int:run_id>", sweeps.SweepDetailView.as_view(), name="sweep-detail"),
    path(
        "sweeps/<int:run_id>/proposals",
        sweeps.SweepProposalsView.as_view(),
        name="sweep-proposals",
    ),
    path("sweeps/<int:run_id>/apply", sweeps.SweepApplyView.as_view(), name="sweep-apply"),
    path("sweeps/<int:run_id>/reverse", sweeps.SweepReverseView.as_view(), name="sweep-reverse"),
    path("sweeps/<int:run_id>/resume", sweeps.SweepResumeView.as_view(), name="sweep-resume"),
    path("sweeps/<int:run_id>/cancel", sweeps.SweepCancelView.as_view(), name="sweep-cancel"),
]

transfer = [
    path("imports", imports.ImportListView.as_view(), name="import-list"),
    path("imports/<int:import_id>", imports.ImportDetailView.as_view(), name="import-detail"),
    path(
        "imports/<int:import_id>/drawers",
        imports.ImportDrawersView.as_view(),
        name="import-drawers",
    ),
    path("imports/<int:import_id>/links", imports.ImportLinksView.as_view(), name="import-links"),
    path(
        "imports/<int:import_id>/reverse",
        imports.ImportReverseView.as_view(),
        name="import-reverse",
    ),
    path("export", imports.ExportView.as_view(), name="export"),
]

urlpatterns = [
    *schema,
    *review,
    *consolidation,
    *palace,
    *transfer,
    re_path(r"", no_such_route, name="no-such-route"),  # last: what nothing above matched
]
