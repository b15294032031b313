"""The shared item vocabulary: every decision an item kind offers has its apply and undo, and the
queue's tie-break order between kinds is the declared one."""

import pytest

from review.items import ACTIONS_BY_KIND, ItemKind, ItemRef
from review.services.actions import ACTIONS


@pytest.mark.parametrize("kind", list(ItemKind), ids=lambda kind: kind.name)
def test_every_offered_action_has_its_apply_and_undo(kind):
    assert set(ACTIONS[kind]) == set(ACTIONS_BY_KIND[kind])


def test_queue_breaks_ties_drawers_then_entities_then_proposals():
    ordered = sorted(ItemKind, key=lambda kind: kind.queue_order)
    assert ordered == [ItemKind.DRAWER, ItemKind.ENTITY, ItemKind.PROPOSAL]


@pytest.mark.parametrize("text", ["d12", "e7", "p3"])
def test_an_item_id_reads_back_as_written(text):
    assert str(ItemRef.parse(text)) == text
