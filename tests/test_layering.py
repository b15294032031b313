"""Dependencies point one way: review -> dedup -> palace. The policy imports no Django at all, no
app has an import cycle, and nothing imports inside a function (which is how cycles hide).

The contracts are import-linter's, under [tool.importlinter] in pyproject.toml; this test runs
them so that `make test` enforces them."""

import ast
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
APPS = ("config", "palace", "dedup", "review")


def imported_modules(package: str) -> dict[str, set[str]]:
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        (
            "dedup/policy",
            ("django", "rest_framework", "palace", "review", "dedup.services", "dedup.candidates"),
        ),
        ("palace", ("dedup", "review")),
        ("dedup", ("review",)),
        ("review", ("api",)),
    ],
)
def test_dependencies_point_one_way(package, forbidden):
    offences = [
        f"{path} imports {name}"
        for path, names in imported_modules(package).items()
        for name in names
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]
    assert offences == []


def test_import_contracts_are_kept(monkeypatch):
    """Layers, a pure policy, no cycle inside review, only config above the API."""
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0, (
        "an import contract is broken: run `lint-imports` for the details"
    )


def function_local_imports(package: str) -> list[str]:
    found = []
    for path in (ROOT / package).rglob("*.py"):
        if "migrations" in path.parts:  # history, frozen as written
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} imports inside {function.name}()"
                for node in ast.walk(function)
                if isinstance(node, ast.Import | ast.ImportFrom)
            ]
    return found


@pytest.mark.parametrize("package", APPS)
def test_no_function_local_imports(package):
    assert function_local_imports(package) == []
