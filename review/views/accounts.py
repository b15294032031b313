"""Logging out: a POST, as Django requires; opened with GET it shows its page, not a 405."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class LogoutView(auth_views.LogoutView):
    """A GET never logs anyone out (a link or a prefetch could); it shows the button instead."""

    http_method_names = ["get", "post", "options"]

    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        return render(request, "registration/logout.html")


logout = LogoutView.as_view()
