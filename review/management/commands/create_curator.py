import getpass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from rest_framework.authtoken.models import Token

from dedup.commands import CastellanCommand
from dedup.errors import DomainError
from dedup.validation import clean_username
from review.curators import curators_group


class Command(CastellanCommand):
    help = "Create a curator (or make an existing user one): a member of the curators group."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--password", help="Asked for when not given and the user is new.")
        parser.add_argument("--staff", action="store_true", help="Also let them use the admin.")

    def handle(
        self, *args: Any, username: str, password: str | None, staff: bool, **options: Any
    ) -> None:
        try:
            username = clean_username(username)
        except DomainError as error:
            raise CommandError(error.message) from error
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        if created:
            if password is None:
                password = getpass.getpass(f"Password for {username}: ")
            if not password:
                user.delete()
                raise CommandError("A new curator needs a password.")
            user.set_password(password)
        if staff:
            user.is_staff = True
        user.save()
        user.groups.add(curators_group())
        token, _ = Token.objects.get_or_create(user=user)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} curator {username} (API token {token.key}).")
