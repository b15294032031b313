"""The Django admin over the palace. Writes go through `dedup.services`, as from the API: a drawer
added here is deduplicated, a deletion is audited, and the audit log is read-only."""

from dedup.admin import entities, palace, records  # noqa: F401 -- each registers its models
from dedup.admin.base import HiddenFieldLookups, ReadOnly, ReadOnlyAdmin, RefusalsAsMessages

__all__ = ["HiddenFieldLookups", "ReadOnly", "ReadOnlyAdmin", "RefusalsAsMessages"]
