"""What belongs to this installation of Castellan rather than to its memories."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class InstallationKey(models.Model):
    """A random value made once for this installation (by migration palace 0029, or by its first
    use on a database emptied since), never shown, exported or changed: the key of what must be
    derived the same way every time and yet not be computed outside (the drawer ids an import, a
    mining run or a checkpoint writes under: `dedup.derived_ids`). It lives in the database, with
    the drawers derived from it, so a dump restored keeps both, and rotating SECRET_KEY (which
    signs sessions) changes nothing here."""

    purpose = models.CharField(max_length=50, unique=True)
    value = models.CharField(max_length=128, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    def __str__(self) -> str:
        return self.purpose  # never the value
