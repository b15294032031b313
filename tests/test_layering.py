"""Dependencies point one way: review -> dedup -> palace. The policy imports no Django at all."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
