from django.contrib import admin
from django.urls import include, path

from config import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("", include("review.urls")),
]
