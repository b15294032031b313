"""A login's name, held to one rule wherever a login is made or renamed: an agent's first key
(`agent_key create`, the admin's key form through `api.models.AgentKeyManager.issue`), a person's
(`create_curator`, `createsuperuser`, the admin's user forms). An audit row names its actor by
name alone, so a new name that reads as another user's ("Carol" beside the curator "carol", or
"c\u0430rol" with a Cyrillic a), or one holding what shows nothing, would make its rows read as
theirs or as no one's. `seed_demo` makes its `curator` under it too.

Names are compared as stored: Django's forms and `create_user` store a name in its NFKC form
(`normalize_username`), and so do the commands (`dedup.validation.clean_username`).

`refuse_a_look_alike` asks; `claim_user_name` asks under a lock on how the name reads
(`hold_user_name`), inside the transaction that then stores the login, so two logins made at the
same moment whose names read alike cannot both pass: the second waits for the first to commit,
then is refused. The lock stands alone in `dedup.locks`' order: a transaction that takes it
takes no other."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError

from dedup.invisible import shows_nothing
from dedup.locks import advisory_lock
from dedup.look_alikes import letter_scripts, reading_form
from dedup.validation import label_form


def refuse_a_look_alike(name: str, *, user: AbstractBaseUser | None = None) -> None:
    """A login's new name (made, or a login renamed: `user`, whose own name is no other's)
    refused when it holds a character that shows nothing (a Hangul filler is a letter to the
    user model; a zero-width space beside letters makes a second "dave"), when it reads as
    another user's (the same after the name rule, `label_form`, and compatibility and case
    folding, `reading_form`: "Carol" beside "carol"), or when it is written in letters of two
    scripts (`letter_scripts`: "c\u0430rol", a Cyrillic a among Latin letters). A name another
    user already holds is theirs (an agent gets its next key under it; the uniqueness of
    usernames is the model's to say)."""
    if any(map(shows_nothing, name)):
        raise ValidationError(
            f"{shown(name)} holds a character that shows nothing: the audit log would show "
            "another name, or none. Choose a name of visible characters.",
            code="invalid",
        )
    users = get_user_model().objects.all()
    others = users.exclude(pk=user.pk) if user is not None and user.pk is not None else users
    if others.filter(username=name).exists():
        return
    scripts = letter_scripts(name)
    if len(scripts) > 1:
        raise ValidationError(
            f"{shown(name)} mixes the letters of "
            f"{' and '.join(map(script_shown, sorted(scripts)))}: it can pass for another "
            "name. Write a login's name in one script.",
            code="invalid",
        )
    # Every user's name is read (a store has its people and agents, not thousands): the
    # database's own case folding is not Unicode's.
    form = reading_form(label_form(name))
    for taken in others.values_list("username", flat=True).iterator():
        if reading_form(label_form(taken)) == form:
            raise ValidationError(
                f"{shown(name)} reads as the user {shown(taken)}: the audit log would not tell "
                "them apart. Choose another name.",
                code="invalid",
            )


def hold_user_name(name: str) -> None:
    """The lock on how `name` reads, held until the caller's transaction ends."""
    advisory_lock("user name", reading_form(label_form(name)))


def claim_user_name(name: str, *, user: AbstractBaseUser | None = None) -> None:
    """`refuse_a_look_alike` under `hold_user_name` (the caller must be in a transaction, and
    store the login in it)."""
    hold_user_name(name)
    refuse_a_look_alike(name, user=user)


def shown(name: str) -> str:
    """A name quoted for a message, each character that shows nothing written as its code
    ("'dave\\u3164'"), so the message shows what it refuses."""
    return "'{}'".format(
        "".join(f"\\u{ord(c):04x}" if shows_nothing(c) else c for c in name).replace("'", "\\'")
    )


def script_shown(script: str) -> str:
    return script if script == "CJK" else script.title()
