from django.urls import path

from review import api

urlpatterns = [
    path("sweeps", api.SweepListView.as_view(), name="sweep-list"),
    path("sweeps/<int:run_id>", api.SweepDetailView.as_view(), name="sweep-detail"),
    path("sweeps/<int:run_id>/proposals", api.SweepProposalsView.as_view(), name="sweep-proposals"),
    path("sweeps/<int:run_id>/apply", api.SweepApplyView.as_view(), name="sweep-apply"),
    path("sweeps/<int:run_id>/reverse", api.SweepReverseView.as_view(), name="sweep-reverse"),
]
