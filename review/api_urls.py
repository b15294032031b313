from django.urls import path

from review import api

urlpatterns = [
    path("queue", api.QueueView.as_view(), name="review-queue"),
    path("items/<str:item_id>/decisions", api.DecideView.as_view(), name="review-decide"),
    path("decisions", api.DecisionListView.as_view(), name="review-decisions"),
    path("decisions/<int:decision_id>/revert", api.RevertView.as_view(), name="review-revert"),
    path("stats", api.StatsView.as_view(), name="review-stats"),
]
