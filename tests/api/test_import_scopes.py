"""What an import over the API may write: as the key's agent, in the key's wings, and a curator's
alias only for a curator (found by an attacker's run against a deployment)."""

import pytest
from django.contrib.auth.models import Permission

from dedup import services
from dedup.imports.ids import client_id
from palace.models import AuditEntry, Drawer, EntityAlias, Import, Mention
from tests.api.conftest import castellan
from tests.conftest import agent_client

pytestmark = pytest.mark.django_db


def drawer_line(**fields) -> dict:
    return {
        "type": "drawer",
        "id": "x1",
        "content": "The release train leaves on Thursdays.",
        "wing": "notes",
        "room": "entries",
        **fields,
    }


def test_an_agents_import_writes_as_the_agent(user, dedup_settings):
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(agent="curator")), format="json")
    assert Drawer.objects.get().agent == user.username


def test_the_agent_a_record_named_is_kept_in_its_source(user, dedup_settings):
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(agent="curator")), format="json")
    assert Drawer.objects.get().source["agent"] == "curator"


def test_a_record_naming_no_agent_is_the_keys(user, dedup_settings):
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line()), format="json")
    assert Drawer.objects.get().agent == user.username


def test_who_may_write_as_any_agent_imports_the_records_agents(user, dedup_settings):
    user.user_permissions.add(Permission.objects.get(codename="write_as_any_agent"))
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(agent="scribe")), format="json")
    assert Drawer.objects.get().agent == "scribe"


def test_a_mention_of_a_drawer_in_another_wing_is_not_recorded(user, dedup_settings):
    # A drawer another import wrote into a wing out of the key's reach, under its client id.
    secret = services.drawer_write_in(
        wing="agents",
        room="r",
        content="The vault is hidden.",
        drawer_id=client_id("castellan", "agents", "secret-1"),
    ).drawer
    client = agent_client(user.username, wings=["notes"])
    mention = {"type": "mention", "drawer": "secret-1", "name": "Vault", "kind": "tool"}
    body = client.post("/api/imports", castellan(drawer_line(), mention), format="json").json()
    assert not Mention.objects.filter(drawer=secret).exists()
    assert client.get(f"/api/imports/{body['id']}").json()["summary"]["malformed"] == 1


def entity_line(alias_source: str) -> dict:
    return {
        "type": "entity",
        "name": "Katarina",
        "kind": "person",
        "aliases": [{"alias": "Kat", "source": alias_source}],
    }


def test_an_agents_import_records_a_curators_alias_as_its_own(user, dedup_settings):
    client = agent_client(user.username)  # every wing: an alias steers them all
    client.post("/api/imports", castellan(drawer_line(), entity_line("curator")), format="json")
    assert EntityAlias.objects.get(alias="Kat").source == EntityAlias.Source.API


def test_a_key_of_some_wings_imports_no_alias(user, dedup_settings):
    """As `POST /api/entities/{id}/aliases` refuses it (out_of_scope): the alias would steer
    the entity's sightings in wings the key does not reach."""
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(), entity_line("api")), format="json")
    imported = Import.objects.get()
    assert not EntityAlias.objects.filter(alias="Kat").exists()
    assert imported.status == Import.Status.DONE
    assert "its aliases are not" in imported.errors[0]["error"]


def test_the_entity_itself_is_still_recorded(user, dedup_settings):
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(), entity_line("api")), format="json")
    assert services.entity_resolve(name="Katarina", kind="person").created is False


def test_an_imported_alias_is_audited_as_the_importers(user, dedup_settings):
    client = agent_client(user.username)
    client.post("/api/imports", castellan(drawer_line(), entity_line("api")), format="json")
    entry = AuditEntry.objects.filter(action__contains="alias").get()
    assert entry.actor == user


def test_an_import_with_an_empty_wing_files_each_record_in_its_own(api):
    response = api.post("/api/imports", {**castellan(drawer_line()), "wing": ""}, format="json")
    assert response.status_code == 202


@pytest.mark.parametrize("wing", ["w" * 101, "   ", "a\tb"])
def test_an_import_into_a_bad_wing_is_refused_and_queues_nothing(api, wing):
    response = api.post("/api/imports", {**castellan(drawer_line()), "wing": wing}, format="json")
    assert response.status_code == 400
    assert Import.objects.count() == 0


def test_an_import_naming_no_wing_is_not_found_for_a_key_of_some_wings(api, user):
    created = api.post("/api/imports", {"format": "castellan", "data": ""}, format="json").json()
    client = agent_client(user.username, wings=["notes"])
    response = client.get(f"/api/imports/{created['id']}")
    assert response.json()["code"] == "import_not_found"


def test_a_key_of_some_wings_imports_an_entity_whose_aliases_are_a_convergences(
    user, dedup_settings
):
    """Nothing would have been recorded: nothing is refused."""
    client = agent_client(user.username, wings=["notes"])
    client.post("/api/imports", castellan(drawer_line(), entity_line("convergence")), format="json")
    assert Import.objects.get().errors == []
