"""Test settings: production settings with only what tests need changed."""

from config.settings import *  # noqa: F403

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
