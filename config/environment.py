"""Reading settings from the environment: each reader gives the default for a variable unset or
blank, and refuses a value it cannot use at start-up (ImproperlyConfigured, naming the variable
and what it takes) rather than failing at the first request that needs it."""

from __future__ import annotations

import os
import re

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}.")


def env_near_threshold(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0.5 <= value <= 1.0:  # also refuses NaN
        why = (
            "below 0.5 distinct facts would be linked as duplicates"
            if value < 0.5
            else "above 1 nothing could be linked (a similarity is at most 1)"
            if value > 1.0
            else "it is not a number (a decimal point, not a comma)"
        )
        raise ImproperlyConfigured(
            f"{name} must be a number from 0.5 to 1 (inclusive), not {raw!r}: {why}."
        )
    return value


# What DRF's throttles read a rate's period by (only its first letter: "100/fortnight" would
# fail at the first request), spelt out so a rate is checked at start-up.
RATE_PERIODS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


def env_rate(name: str, default: str) -> str:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    count, _, period = raw.partition("/")
    if not (re.fullmatch(r"[0-9]+", count) and int(count) > 0 and period in RATE_PERIODS):
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per s, min, hour or day, like 100/s or "
            f"1200/min, not {raw!r}."
        )
    return raw


def env_int(name: str, default: int, *, minimum: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        what = "a positive whole number" if minimum == 1 else f"a whole number of {minimum} or more"
        raise ImproperlyConfigured(f"{name} must be {what}, not {raw!r}.")
    return value


def env_positive_int(name: str, default: int) -> int:
    return env_int(name, default, minimum=1)
