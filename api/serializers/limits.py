"""Strict text fields that declare, in the OpenAPI schema, the length limits `dedup.validation`
enforces. The check stays in `dedup.validation` (shared with every interface); these only say it,
so a client or a fuzzer knows the limit before it is refused."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field

from api.serializers.common import StrictTextField
from dedup.validation import AGENT_MAX_LENGTH, NAME_MAX_LENGTH
from palace.models import LABEL_MAX_LENGTH

KIND_MAX_LENGTH = 32  # dedup.validation.KIND_PATTERN: a letter and up to 31 more


# A name and a kind, given, are never "" (`InputSerializer.given_labels`).
@extend_schema_field({"type": "string", "minLength": 1, "maxLength": NAME_MAX_LENGTH})
class NameField(StrictTextField):
    """A drawer's, an entity's or an alias's name, or a checkpoint's id."""


@extend_schema_field({"type": "string", "maxLength": LABEL_MAX_LENGTH})
class LabelField(StrictTextField):
    """A wing's or a room's name."""


@extend_schema_field({"type": "string", "maxLength": AGENT_MAX_LENGTH})
class AgentField(StrictTextField):
    """The agent that wrote a drawer."""


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": KIND_MAX_LENGTH})
class KindField(StrictTextField):
    """A memory's or an entity's kind: a short lowercase word."""
