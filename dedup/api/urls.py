from django.urls import path

from dedup.api import views

urlpatterns = [
    path("wings", views.WingListView.as_view(), name="wing-list"),
    path("wings/<str:wing>", views.WingDetailView.as_view(), name="wing-detail"),
    path(
        "wings/<str:wing>/rooms/<str:room>/drawers",
        views.RoomDrawersView.as_view(),
        name="room-drawers",
    ),
    path("drawers/<str:drawer_id>", views.DrawerDetailView.as_view(), name="drawer-detail"),
    path(
        "drawers/<str:drawer_id>/supersede",
        views.DrawerSupersedeView.as_view(),
        name="drawer-supersede",
    ),
    path(
        "drawers/<str:drawer_id>/duplicates",
        views.DrawerDuplicatesView.as_view(),
        name="drawer-duplicates",
    ),
    path(
        "drawers/<str:drawer_id>/mentions",
        views.DrawerMentionsView.as_view(),
        name="drawer-mentions",
    ),
    path("diary", views.DiaryView.as_view(), name="diary"),
    path("checkpoints", views.CheckpointView.as_view(), name="checkpoints"),
    path("entities", views.EntityListView.as_view(), name="entity-list"),
    path("entities/<str:entity_id>", views.EntityDetailView.as_view(), name="entity-detail"),
    path(
        "entities/<str:entity_id>/mentions",
        views.EntityMentionsView.as_view(),
        name="entity-mentions",
    ),
    path(
        "entities/<str:entity_id>/candidates",
        views.EntityCandidatesView.as_view(),
        name="entity-candidates",
    ),
    path(
        "entities/<str:entity_id>/aliases",
        views.EntityAliasesView.as_view(),
        name="entity-aliases",
    ),
]
