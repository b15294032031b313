from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in

from review.preferences import preferences_to_session


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        # A read into the new session at login, not a write path: see `review.preferences`.
        user_logged_in.connect(preferences_to_session, dispatch_uid="review_preferences")
