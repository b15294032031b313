"""A login's name, held to one rule wherever a login is made or renamed: an agent's first key
(`agent_key create`, the admin's key form through `api.models.AgentKeyManager.issue`), a person's
(`create_curator`, `createsuperuser`, the admin's user forms). An audit row names its actor by
name alone, so a new name that reads as another user's ("Carol" beside the curator "carol", or
"c\u0430rol" with a Cyrillic a) would make its rows read as theirs.

`refuse_a_look_alike` asks; `claim_user_name` asks under a lock on how the name reads, inside
the transaction that then stores the login, so two logins made at the same moment whose names
read alike cannot both pass: the second waits for the first to commit, then is refused. The
lock stands alone in `dedup.locks`' order: a transaction that takes it takes no other."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from dedup.locks import advisory_lock
from dedup.look_alikes import letter_scripts, reading_form
from dedup.validation import label_form


def refuse_a_look_alike(name: str, *, user: Any = None) -> None:
    """A new name (no user holds it yet) that reads as another user's, refused: the same as
    one's after the name rule (`label_form`), compatibility folding and case folding
    (`reading_form`: "Carol" beside "carol"), or written in letters of two scripts
    (`letter_scripts`: "c\u0430rol", a Cyrillic a among Latin letters). A name a user already
    holds is theirs (an agent gets its next key under it; the uniqueness of usernames is the
    model's to say). `user`: the login being renamed, whose own name is no other's."""
    users = get_user_model().objects
    if users.filter(username=name).exists():
        return
    scripts = letter_scripts(name)
    if len(scripts) > 1:
        raise ValidationError(
            f"{name!r} mixes the letters of {' and '.join(map(script_shown, sorted(scripts)))}:"
            " it can pass for another name. Write a login's name in one script.",
            code="invalid",
        )
    others = users.exclude(pk=user.pk) if getattr(user, "pk", None) is not None else users
    # Every user's name is read (a store has its people and agents, not thousands): the
    # database's own case folding is not Unicode's.
    form = reading_form(label_form(name))
    for taken in others.values_list("username", flat=True).iterator():
        if reading_form(label_form(taken)) == form:
            raise ValidationError(
                f"{name!r} reads as the user {taken!r}: the audit log would not tell them "
                "apart. Choose another name.",
                code="invalid",
            )


def claim_user_name(name: str, *, user: Any = None) -> None:
    """`refuse_a_look_alike` under a lock on the name's reading form, held until the caller's
    transaction ends (it must be in one, and store the login in it)."""
    advisory_lock("user name", reading_form(label_form(name)))
    refuse_a_look_alike(name, user=user)


def script_shown(script: str) -> str:
    return script if script == "CJK" else script.title()
