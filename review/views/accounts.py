"""Logging in, with what the console had to say shown there and kept for the page after; logging
out: a POST, as Django requires; opened with GET it shows its page, not a 405."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.messages.storage.base import BaseStorage
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.response import TemplateResponse

from review.forms import LoginForm


class LoginView(auth_views.LoginView):
    """Django's, showing the messages waiting (a session that ended: a decision not made) on the
    login page itself, where htmx sends the curator, and keeping them for the page the login
    returns to (the item, where the decision is still to make). Shown only after the login,
    the curator met a login page that said nothing of why."""

    authentication_form = LoginForm

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **kwargs)
        if isinstance(response, TemplateResponse):
            response.render()  # the template reads the messages now
        waiting = messages.get_messages(self.request)
        if isinstance(waiting, BaseStorage):
            waiting.used = False  # and leaves them stored
        return response


class LogoutView(auth_views.LogoutView):
    """A GET never logs anyone out (a link or a prefetch could); it shows the button instead."""

    http_method_names = ["get", "post", "options"]

    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        return render(request, "registration/logout.html")


login = LoginView.as_view()
logout = LogoutView.as_view()
