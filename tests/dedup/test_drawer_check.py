"""The dry run of the write path: the verdict a write would get, with nothing written."""

import uuid

import pytest
from django.apps import apps

from dedup import services
from dedup.errors import Conflict, DrawerNameTaken, EmptyLabel

pytestmark = pytest.mark.django_db

TEXT = "The deploy script must run database migrations before restarting the web workers."
TYPO = "The deploy script must run database migrations before restartng the web workers."


def row_counts() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for app in ("palace", "review")
        for model in apps.get_app_config(app).get_models()
    }


@pytest.fixture
def original(dedup_settings):
    return services.drawer_write_in(wing="ops", room="runbooks", content=TEXT).drawer


def test_an_exact_copy_would_return_the_existing_drawer(original):
    before = row_counts()
    check = services.drawer_check(wing="ops", room="runbooks", content=TEXT)
    assert check.existing == original
    assert check.would_store is False
    assert row_counts() == before


def test_a_typo_would_be_stored_and_linked_with_its_evidence(original):
    before = row_counts()
    check = services.drawer_check(wing="ops", room="runbooks", content=TYPO)
    assert check.would_store is True
    assert [candidate.id for candidate, _ in check.similar] == [original.id]
    assert check.similar[0][1].verdict == "near"
    assert row_counts() == before


def test_the_dry_run_agrees_with_the_write(original):
    check = services.drawer_check(wing="ops", room="runbooks", content=TYPO)
    written = services.drawer_write_in(wing="ops", room="runbooks", content=TYPO)
    assert [c.id for c, _ in check.similar] == [link.older_id for link in written.links]


def test_a_new_room_is_not_created_by_a_dry_run(dedup_settings):
    before = row_counts()
    check = services.drawer_check(wing="new-wing", room="new-room", content=TEXT)
    assert check.would_store is True
    assert check.similar == []
    assert row_counts() == before


def test_a_dry_run_refuses_what_the_write_refuses(original):
    services.drawer_write_in(wing="ops", room="runbooks", content="Named one.", name="runbook")
    with pytest.raises(DrawerNameTaken):
        services.drawer_check(wing="ops", room="runbooks", content="Other.", name="runbook")
    with pytest.raises(EmptyLabel):
        services.drawer_check(wing=" ", room="runbooks", content=TEXT)


def test_a_replayed_id_would_return_its_drawer_and_another_room_refuses_it(dedup_settings):
    drawer_id = uuid.uuid4()
    stored = services.drawer_write_in(
        wing="ops", room="runbooks", content=TEXT, drawer_id=drawer_id
    ).drawer
    check = services.drawer_check(wing="ops", room="runbooks", content=TEXT, drawer_id=drawer_id)
    assert check.existing == stored
    with pytest.raises(Conflict):
        services.drawer_check(wing="ops", room="elsewhere", content=TEXT, drawer_id=drawer_id)
