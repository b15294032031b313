import getpass
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from dedup.commands import CastellanCommand
from dedup.user_names import claim_user_name, refuse_a_look_alike
from dedup.validation import clean_username
from review.curators import curators_group, name_refused, refuse_an_agents


class Command(CastellanCommand):
    help = (
        "Create a curator (or make an existing user one): a member of the curators group. "
        "--password sets the password of an existing user too."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "username", help="A person's name: an agent's user (agent_key) is refused."
        )
        parser.add_argument(
            "--password",
            help="Asked for (in a terminal) when not given and the user is new; checked "
            "against AUTH_PASSWORD_VALIDATORS.",
        )
        parser.add_argument("--staff", action="store_true", help="Also let them use the admin.")

    def handle(
        self, *args: Any, username: str, password: str | None, staff: bool, **options: Any
    ) -> None:
        username = clean_username(username)
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        refuse_an_agents(user)
        # Everything that can refuse is asked before anything is written, so a refusal (or a
        # prompt nobody answers) leaves no user behind, and no user without a password. A new
        # name is asked again under its lock, in the transaction that stores it.
        if user is None:
            with name_refused(username):
                refuse_a_look_alike(username)
        if password is None and user is None:
            password = self.ask_password(username)
        if password is not None:
            self.check_password(password, user or User(username=username))
        with transaction.atomic():
            if user is None:
                with name_refused(username):
                    claim_user_name(username)
            new = user is None
            user, created = User.objects.get_or_create(username=username)
            refuse_an_agents(user)  # an agent's, made one since it was asked for above
            if new and not created:
                raise CommandError(
                    f"{username} was made meanwhile, by another command: it is not made a "
                    "curator unasked. Run this again to make that login a curator."
                )
            if password is not None:
                user.set_password(password)
            if staff:
                user.is_staff = True
            user.save()
            user.groups.add(curators_group())
            token, _ = Token.objects.get_or_create(user=user)
        verb = "Created" if created else "Updated"
        changed = ", password set" if password is not None and not created else ""
        self.stdout.write(f"{verb} curator {username} (API token {token.key}{changed}).")

    def ask_password(self, username: str) -> str:
        """The new curator's password, typed twice at a terminal. Without one (stdin a file or
        /dev/null, as under cron or a deploy script) there is nobody to ask: getpass would read
        stdin, or fail on the terminal's settings."""
        if not sys.stdin.isatty():
            raise CommandError(
                f"A new curator needs a password: give --password, or run this in a terminal "
                f"to be asked. No user {username} was created."
            )
        try:
            password = getpass.getpass(f"Password for {username}: ")
            again = getpass.getpass("Password (again): ")
        except (EOFError, KeyboardInterrupt):
            raise CommandError(f"No password given. No user {username} was created.") from None
        if password != again:
            raise CommandError(f"The passwords differ. No user {username} was created.")
        return password

    def check_password(self, password: str, user: Any) -> None:
        """Refuse an empty password, and one AUTH_PASSWORD_VALIDATORS refuse, with their
        reasons."""
        if not password:
            raise CommandError("A curator needs a password.")
        try:
            validate_password(password, user)
        except ValidationError as error:
            raise CommandError(f"Password refused: {' '.join(error.messages)}") from None
