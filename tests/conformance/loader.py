"""The language-neutral conformance cases (../shared/conformance/cases.json), vendored here so the
suite runs from any clone; a test checks the copy against the shared original when present."""

from __future__ import annotations

import json
import operator
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "cases.json"
SHARED = HERE.parents[2] / "shared" / "conformance" / "cases.json"


@cache
def cases() -> dict:
    return json.loads(VENDORED.read_text(encoding="utf-8"))


def params(function: str) -> list:
    return [pytest.param(case, id=case["id"]) for case in cases()[function]]


class UnknownExpectation(AssertionError):
    """A case expects something the runner does not check: the runner must learn the key (or the
    case must drop it), never skip it silently."""


def known(expect: Mapping, keys: Collection[str], where: str) -> Mapping:
    """`expect` itself, once every key in it is one of `keys`, the keys the caller checks."""
    unknown = sorted(set(expect) - set(keys))
    if unknown:
        raise UnknownExpectation(
            f"{where}: expect key(s) {unknown} are not checked here (known: {sorted(keys)})"
        )
    return expect


def expectations(case: dict, keys: Collection[str]) -> Mapping:
    """A function case's `expect`, refused if it holds a key outside `keys`."""
    return known(case["expect"], keys, f"case {case['id']!r}")


def text_of(spec: dict, literal: str = "text", expression: str = "python") -> str:
    """A case's text: a literal, or a Python expression that rebuilds it exactly."""
    if expression in spec:
        return eval(spec[expression], {})  # trusted, vendored test data
    return spec[literal]


_OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    ">": operator.gt,
    "<": operator.lt,
    "<=": operator.le,
}


def holds(actual, expected) -> bool:
    """A literal expectation, or {op, value, tol?}."""
    if isinstance(expected, dict) and "op" in expected:
        if expected["op"] == "approx":
            return abs(actual - expected["value"]) <= expected.get("tol", 1e-9)
        return _OPS[expected["op"]](actual, expected["value"])
    return actual == expected
