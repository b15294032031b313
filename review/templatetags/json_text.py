"""A JSON value as JSON text in a page (a drawer's source: `{"kind": "demo"}`, not Python's
`{'kind': 'demo'}`); the template escapes it as any text."""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


@register.filter
def as_json(value: Any) -> str:
    if value in (None, {}, []):
        return "—"
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
