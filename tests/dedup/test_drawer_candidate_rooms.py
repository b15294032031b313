"""Drawer candidates in rooms whose every drawer repeats template words, and the bounds on each
lookup: the room's rarer words are asked first, so a variant still finds its original when
hundreds of newer drawers share its template."""

import pytest

from dedup import candidates, policy, services
from dedup.candidates import room_words
from palace.models import Drawer
from tests.dedup.drawers_data import bulk_drawers

pytestmark = pytest.mark.django_db

# Ten long words, more than a write's word pairs hold: asked first, every pair would be theirs.
TEMPLATE = (
    "Quarterly infrastructure retrospective, engineering department, maintenance observations, "
    "configuration recommendations, operational escalations:"
)
RARE = ["amber", "basalt", "cobalt", "dolomite", "emerald", "feldspar"]


def templated(n: int) -> str:
    # As long as the original below, so its length band does not set them apart.
    return (
        f"{TEMPLATE} note {n:05d} on the pump {n % 7} and valve {n % 11}, logged by the night "
        f"shift {n:05d} and filed for review."
    )


@pytest.fixture
def room(dedup_settings):
    return services.room_get_or_create(wing="ops", room="reports")


def test_a_room_s_template_words_are_its_common_words(room):
    bulk_drawers(room, [templated(n) for n in range(room_words.MIN_SAMPLE_DRAWERS)])
    common = candidates.common_words(room.id)
    assert {"quarterly", "infrastructure", "retrospective", "engineering"} <= common
    assert "logged" in common  # in every drawer too
    assert {"note", "pump"} <= common  # short ones as well, though no query asks them
    assert candidates.rare_first(room.id, ["infrastructure", "amberlith", "quarterly"]) == [
        "amberlith",
        "infrastructure",
        "quarterly",
    ]


def test_a_small_room_has_no_common_words_until_it_may_have_grown(room):
    bulk_drawers(room, [templated(n) for n in range(room_words.MIN_SAMPLE_DRAWERS - 2)])
    assert candidates.common_words(room.id) == frozenset()
    bulk_drawers(room, [templated(n) for n in range(2)])
    assert candidates.common_words(room.id) == frozenset()  # one lookup: one write at most
    assert "quarterly" in candidates.common_words(room.id)


def variant_candidates(room, variant: str) -> list[int]:
    text = policy.Text.of(variant)
    found = services.candidates_for_text(candidates.Scope(room=room), text, threshold=0.9)
    return [c.id for c in found.lexical]


def test_template_words_do_not_crowd_out_the_original(room, monkeypatch):
    """The template's words are the text's longest: asked first (by length alone), their pairs
    match every newer drawer of the room, more than a group's lookup keeps, and the original is
    lost."""
    original_text = f"{TEMPLATE} {' '.join(RARE)} replaced, filters checked."
    original = services.drawer_write(room=room, content=original_text).drawer
    bulk_drawers(room, [templated(n) for n in range(4 * candidates.GROUP_MATCHES)])
    room_words.forget()  # the next sample, as after REFRESH_WRITES writes
    # Two rare words mistyped; four intact.
    variant = original_text.replace("emerald", "emreald").replace("cobalt", "cobatl")

    assert original.id in variant_candidates(room, variant)

    room_words.forget()
    monkeypatch.setattr(
        candidates,
        "query_groups",
        lambda room_id, words, groups, **options: candidates.lexical_groups(words),
    )
    assert original.id not in variant_candidates(room, variant)


def test_each_group_keeps_only_its_newest_matches(room):
    """A common group's lookup stops at GROUP_MATCHES drawers, the newest: the work of one query
    is bounded whatever the room's size."""
    bulk_drawers(room, [templated(n) for n in range(2 * candidates.GROUP_MATCHES)])
    newest = list(Drawer.objects.filter(room=room).order_by("-id").values_list("id", flat=True))
    found = candidates.lexical(
        candidates.Scope(room=room),
        ["quarterly", "infrastructure"],
        limit=10 * candidates.GROUP_MATCHES,
    )
    assert [c.id for c in found] == newest[: candidates.GROUP_MATCHES]
