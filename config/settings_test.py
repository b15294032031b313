"""Test settings: production settings with only what tests need changed."""

import os

# With DEBUG off the settings refuse to start without a real key; this one signs nothing outside
# the test run. Set for the import alone, so subprocesses started by tests get no key unasked.
_KEY_GIVEN = "SECRET_KEY" in os.environ
os.environ.setdefault("SECRET_KEY", "test-only-key-not-secret-" + "x" * 40)
from config.settings import *  # noqa: E402, F403

if not _KEY_GIVEN:
    del os.environ["SECRET_KEY"]

# Tests (and the live server of the browser tests) talk plain HTTP.
SECURE_SSL_REDIRECT = False
# Hashing at full strength only slows the suite down.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Background tasks run at once in tests; the database backend and its worker are tested apart.
TASKS = {
    "default": {
        "BACKEND": "django_tasks.backends.immediate.ImmediateBackend",
        "ENQUEUE_ON_COMMIT": False,
    }
}
# Tests run without `collectstatic`: static files come from the apps as they are (hashed names
# and WhiteNoise's production serving are tested through gunicorn in tests/deploy/).
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
# Django's test client logs in without a request, which django-axes refuses; the lockout is
# tested with it switched on (tests/config/test_throttling.py).
AXES_ENABLED = False
# Tests write far more than an agent would in a minute; the throttle is tested with its own rate.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"writes": None},
}
