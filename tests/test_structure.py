"""Modules and functions stay small enough to read (issue 9): a module over ~400 lines becomes a
package by concern, a function over ~60 lines is cut by phase. Migrations (history, generated)
and tests are exempt."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "api", "palace", "dedup", "review", "bench")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def sources() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


@pytest.mark.parametrize("path", sources(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_module_stays_under_the_size_of_one_concern(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{lines} lines: make it a package by concern"


@pytest.mark.parametrize("path", sources(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_function_is_longer_than_a_screen(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [
        f"{node.name}() is {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_an_assert_states_one_fact():
    """`assert a and b` fails without saying which fact broke: one assert per fact."""
    joined = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
        and isinstance(node.test, ast.BoolOp)
        and isinstance(node.test.op, ast.And)
    ]
    assert joined == []
