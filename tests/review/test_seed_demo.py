"""Issue 13, defect 7: `make run` runs seed_demo on every start. After a curator renamed a wing,
moved a room or deleted demo drawers, it must not raise, nor write the demo again over their
work; it still prints the curator's login, and mints the scout's key only the first time."""

import io
import random
import re
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from api.models import AgentKey
from dedup import services
from palace.models import AuditEntry, Drawer, Mention, Room, Wing
from review.management.commands.seed_demo import SIGHTINGS, demo_plan

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = io.StringIO()
    call_command("seed_demo", "--no-progress", stdout=out)
    return out.getvalue()


@pytest.fixture
def first_output(dedup_settings):
    return seed()


def test_a_second_run_after_admin_edits_writes_nothing_and_does_not_raise(first_output):
    castellan = Wing.objects.get(name="castellan")
    services.wing_rename(wing=castellan, name="castle")
    ops = Room.objects.get(wing=castellan, name="ops")
    services.room_change(room=ops, name="operations", wing=Wing.objects.get(name="personal"))
    deleted = Drawer.objects.filter(room__wing__name="research").order_by("pk").first()
    services.drawer_delete(drawer=deleted)
    drawers = Drawer.objects.count()
    output = seed()
    assert Drawer.objects.count() == drawers
    assert not Drawer.objects.filter(uuid=deleted.uuid).exists()
    assert not Wing.objects.filter(name="castellan").exists()
    assert "seeded already" in output


def test_every_run_prints_the_login_and_mints_the_scout_key_once(first_output):
    assert "Curator login: curator / castellan-demo" in first_output
    assert "Agent key" in first_output
    again = seed()
    assert "Curator login: curator / castellan-demo" in again
    assert AgentKey.objects.filter(user__username="scout").count() == 1
    assert "manage.py agent_key create scout" in again
    assert AuditEntry.objects.filter(action="demo.seed").count() == 1


def test_the_example_names_where_the_app_answers(first_output):
    """`make run PORT=8302` passes its address: the printed curl is the one to run."""
    assert "http://127.0.0.1:8000/api/wings" in first_output
    out = io.StringIO()
    call_command("seed_demo", "--no-progress", "--url", "http://127.0.0.1:8302/", stdout=out)
    assert 'Bearer <key>" http://127.0.0.1:8302/api/wings' in out.getvalue()


# The id each demo write was given before: uuid5 of its index and text, in this namespace.
OLD_DEMO_NAMESPACE = uuid.UUID("5e3c7c1a-1f0b-4a8e-9d2c-3b6f0e9a7d41")


def test_a_demo_drawers_id_is_not_derived_from_the_plan(first_output):
    drawer = Drawer.objects.get(source__kind="demo", source__item=0)
    assert drawer.uuid != uuid.uuid5(OLD_DEMO_NAMESPACE, f"0:{drawer.content}")


def test_an_id_the_plan_names_taken_first_does_not_stop_the_seed(dedup_settings):
    """On a store that has keys, any of them could compute the plan's ids and write first."""
    wing, room, content, *_ = demo_plan(random.Random(2026))[0]
    services.drawer_write_in(
        wing="other",
        room="r",
        content="Taken first.",
        drawer_id=uuid.uuid5(OLD_DEMO_NAMESPACE, f"0:{content}"),
    )
    assert "Demo palace:" in seed()
    assert Drawer.objects.filter(room__wing__name=wing, room__name=room, content=content).exists()


def names(text: str, name: str) -> bool:
    """Whether the text names it as written, a whole word ("C" is not named by "C++")."""
    return re.search(rf"(?<![\w+#.]){re.escape(name)}(?![\w+#])", text) is not None


def test_every_demo_mention_is_on_a_drawer_that_names_it(first_output):
    """The curator's trial: Katarina's sample drawer was about edit similarity, and "Ada" was
    mentioned on "Maria recommended...": each sighting went to every seventh drawer."""
    mentions = Mention.objects.filter(provenance__kind="demo").select_related("drawer")
    assert mentions.count() == len(SIGHTINGS)
    for mention in mentions:
        name = mention.observation["name"]
        assert names(mention.drawer.content, name), (name, mention.drawer.content)


def seed_refused() -> str:
    with pytest.raises(CommandError) as refusal:
        seed()
    return str(refusal.value)


def test_a_first_seed_beside_a_look_alike_login_is_refused_and_writes_nothing(dedup_settings):
    """The demo's curator is held to the rule of every login's name: beside an administrator
    "Curator", a second login reading as theirs would make the audit log's rows ambiguous."""
    get_user_model().objects.create_user("Curator", password="x")
    refusal = seed_refused()
    assert "reads as the user 'Curator'" in refusal
    assert not get_user_model().objects.filter(username="curator").exists()
    assert not Drawer.objects.exists()


def test_an_agents_login_named_curator_is_not_made_a_curator(dedup_settings):
    call_command("agent_key", "create", "curator", "--wings", "*", stdout=io.StringIO())
    refusal = seed_refused()
    assert "agent's user" in refusal
    assert not Drawer.objects.exists()


def test_a_later_run_beside_a_look_alike_serves_on_without_a_login(first_output):
    """`make run` runs seed_demo at every start: once the curator renamed themselves "Curator",
    the next start must not stop, nor make a second "curator"."""
    User = get_user_model()
    User.objects.filter(username="curator").update(username="Curator")
    out, err = io.StringIO(), io.StringIO()
    call_command("seed_demo", "--no-progress", stdout=out, stderr=err)
    assert "No demo curator login" in err.getvalue()
    assert "Curator login:" not in out.getvalue()
    assert not User.objects.filter(username="curator").exists()
