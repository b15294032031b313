"""Errors the write path raises. Each carries a stable machine-readable `code` and the HTTP
status an interface should answer with; the API's exception handler turns them into JSON."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    code = "invalid"
    status = 400

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or {}


class InvalidInput(DomainError):
    code = "invalid"


class EmptyLabel(DomainError):
    code = "empty_label"


class ContentTooLarge(DomainError):
    code = "content_too_large"


class NotFound(DomainError):
    code = "not_found"
    status = 404


class Conflict(DomainError):
    code = "conflict"
    status = 409


class DrawerNameTaken(Conflict):
    code = "drawer_name_taken"
