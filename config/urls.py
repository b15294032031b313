from django.contrib import admin
from django.urls import include, path

from config import health, metrics
from review.forms import AdminLoginForm

admin.site.login_form = AdminLoginForm

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("", include("review.urls")),
]

handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
