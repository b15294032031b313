"""Django's `createsuperuser`, its new name held to the rule of every login's
(`dedup.user_names`): one that reads as another user's ("Admin" beside the agent "admin") is
refused, as `create_curator`, `agent_key create` and the admin refuse it. Found before
django.contrib.auth's own because `dedup` comes first in INSTALLED_APPS.

At a prompt the name is asked as it is typed (and asked for again if refused). With `--noinput`
(as a deploy script runs it: the name from --username or DJANGO_SUPERUSER_USERNAME) it is asked
under its lock, in the transaction that stores the login, so two logins made at once whose names
read alike cannot both be. A prompt holds no transaction (nor lock) while someone types: a login
made meanwhile under a name that reads alike is not seen."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser
from django.core.exceptions import ValidationError
from django.db import transaction

from dedup.user_names import claim_user_name, refuse_a_look_alike


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        self.held = not options["interactive"]
        if not self.held:
            super().handle(*args, **options)
            return
        with transaction.atomic(using=options["database"]):
            super().handle(*args, **options)

    def _validate_username(self, username: str, verbose_field_name: str, database: str) -> Any:
        """Django's checks (taken, blank, the field's own), then the rule: the one place every
        name passes, typed, given with --username or read from the environment. (A private
        method of Django's command, which returns its refusal as a line of text: the public
        hook, `get_input_data`, sees typed names only.)"""
        checked = super()._validate_username  # type: ignore[misc]  # not in django-stubs
        error = checked(username, verbose_field_name, database)
        if error:
            return error
        try:
            (claim_user_name if self.held else refuse_a_look_alike)(username)
        except ValidationError as refusal:
            return f"Error: {' '.join(refusal.messages)}"
        return None
