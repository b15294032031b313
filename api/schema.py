"""The schema's class (`DEFAULT_SCHEMA_CLASS`): drf-spectacular's, each operation documenting the
refusals it can meet whatever its view declares. Apart from `api.openapi`, whose import of
drf-spectacular's views reads this class (their `extend_schema`) before that module is done."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import SAFE_METHODS

from api.errors import ERRORS
from api.permissions import ScopedAccess
from api.throttles import WriteRateThrottle


def refusals(view: Any, method: str) -> set[int]:
    """The statuses a request of `method` to `view` may be answered by what every view shares,
    whatever the view declares: its permission (`ScopedAccess`: 403 for a role or key without
    the method's right, or a key not reaching the wing or every wing), and for a write the edge
    (411: a body sent chunked, `config.middleware`), the parser (415: every write parses a body
    sent, `api.views.common.body_checked`) and the write throttle (429)."""
    statuses = set()
    if any(issubclass(permission, ScopedAccess) for permission in view.permission_classes):
        statuses.add(403)
    if method not in SAFE_METHODS:
        statuses |= {411, 415}
        if any(issubclass(throttle, WriteRateThrottle) for throttle in view.throttle_classes):
            statuses.add(429)
    return statuses


class CastellanAutoSchema(AutoSchema):
    """drf-spectacular's schema, each operation documenting the `refusals` it can meet (a
    schemathesis run failed on an undocumented 429), with the error body, beside the errors
    its view declares (`api.errors.errors`)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation["responses"]
        for status in refusals(self.view, self.method):
            if str(status) not in responses:
                responses[str(status)] = self._get_response_for_code(ERRORS[status], str(status))
        operation["responses"] = dict(sorted(responses.items()))
        return operation
