"""The admin's page of an import shows the first of its drawers, links and malformed records and
how many more there are: an import may hold hundreds of thousands."""

import json
from pathlib import Path

import pytest

from dedup import imports
from palace.models import Import

pytestmark = pytest.mark.django_db


def test_an_imports_page_lists_the_first_twenty_of_each(admin_client, tmp_path: Path):
    path = tmp_path / "export.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"mp-{n}",
                "document": f"Service {n} restarts at {n} past the hour, every hour.",
                "metadata": {"wing": "w", "room": "r"},
            }
        )
        for n in range(25)
    ]
    path.write_text("\n".join(lines + ["not json"] * 23) + "\n")
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    imported = Import.objects.get(pk=imported.pk)
    assert imported.drawers.count() == 25
    assert len(imported.errors) == 23
    page = admin_client.get(f"/admin/palace/import/{imported.pk}/change/").content.decode()
    first = imported.drawers.order_by("id").first()
    last = imported.drawers.order_by("id").last()
    assert str(first.uuid) in page
    assert str(last.uuid) not in page
    assert "(and 5 more)" in page  # of the drawers
    assert "(and 3 more)" in page  # of the malformed records
    assert page.count("export.jsonl:") == 20


def test_the_malformed_records_past_those_kept_are_counted(admin_client, tmp_path: Path):
    """A fresh-eyes review: the import keeps the first 100; "how many more" counted those only."""
    path = tmp_path / "export.jsonl"
    path.write_text("not json\n" * 130)
    imported = imports.import_create(source=str(path), format="mempalace")
    imports.import_run(imported, path=path)
    page = admin_client.get(f"/admin/palace/import/{imported.pk}/change/").content.decode()
    assert "(and 110 more)" in page
