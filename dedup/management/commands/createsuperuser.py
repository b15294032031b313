"""Django's `createsuperuser`, its new name held to the rule of every login's
(`dedup.user_names`): one that reads as another user's ("Admin" beside the agent "admin"), mixes
scripts or shows nothing is refused, as `create_curator`, `agent_key create` and the admin refuse
it. Found before django.contrib.auth's own because `dedup` comes first in INSTALLED_APPS.

With `--noinput` (as a deploy script runs it: the name from --username or
DJANGO_SUPERUSER_USERNAME) the name is asked under its lock, in the transaction that stores the
login. At a prompt it is asked as it is typed (and asked for again if refused), but no
transaction is held while someone types (on SQLite it would hold every writer): once the login
is stored, its name is asked again under the lock, and a login made meanwhile under a name that
reads alike means this one is taken back. Either way, of two logins made at once whose names
read alike one is kept. The lock is the default database's (`dedup.locks`): --database names
no other in this project."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.management.commands import createsuperuser
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from dedup.user_names import claim_user_name, hold_user_name, refuse_a_look_alike, shown


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        self.under_lock = not options["interactive"]
        self.accepted: str | None = None
        if self.under_lock:
            with transaction.atomic(using=options["database"]):
                super().handle(*args, **options)
            return
        try:  # its "created" said once it is kept
            super().handle(*args, **{**options, "verbosity": 0})
        except IntegrityError:  # the very name, made while it was typed
            raise CommandError(
                f"Error: {shown(self.accepted or '')} was made meanwhile, by another command: "
                "no superuser was made. Choose another name."
            ) from None
        if self.accepted is not None:
            self.keep_unless_met(self.accepted, options["database"])
            if options["verbosity"] >= 1:
                self.stdout.write("Superuser created successfully.")

    def _validate_username(self, username: str, verbose_field_name: str, database: str) -> Any:
        """Django's checks (taken, blank, the field's own), then the rule: the one place every
        name passes, typed, given with --username or read from the environment. (A private
        method of Django's command, which returns its refusal as a line of text: the public
        hook, `get_input_data`, sees typed names only.)"""
        # As it will be stored (`create_user` normalises it): "\uff44an" is taken if "dan" is.
        username = self.UserModel.normalize_username(username)
        try:  # the field's own check first: Django asks whether a name is taken before it,
            self.username_field.clean(username, None)  # and PostgreSQL refuses a NUL in a query
        except ValidationError as refusal:
            return "; ".join(refusal.messages)
        if self.under_lock and username:  # before Django asks whether it is taken
            hold_user_name(username)
        checked = super()._validate_username  # type: ignore[misc]  # not in django-stubs
        error = checked(username, verbose_field_name, database)
        if error:
            return error
        try:
            refuse_a_look_alike(username)
        except ValidationError as refusal:
            return f"Error: {' '.join(refusal.messages)}"
        self.accepted = username
        return None

    def keep_unless_met(self, username: str, database: str) -> None:
        """The login made at a prompt, asked again under its name's lock now that it is stored;
        taken back if another whose name reads alike was made since its name was typed."""
        refusal = None
        with transaction.atomic(using=database):
            users = get_user_model().objects.db_manager(database)
            made = users.filter(username=username).first()
            if made is None:  # nothing was stored (no terminal to ask at)
                return
            try:
                claim_user_name(username, user=made)
            except ValidationError as error:
                refusal = " ".join(error.messages)
                made.delete()
        if refusal is not None:  # said once the login is gone
            raise CommandError(
                f"{refusal} It was made while {shown(username)} was typed: the superuser "
                f"{shown(username)} was taken back."
            )
