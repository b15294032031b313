"""The later decisions a revert waits for are found by the database from the objects they
touched: exactly those naming one of the decision's, by its whole id."""

import pytest

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.services.reverts import NARROWED_TOUCHES, _batch_dependents, dependents

pytestmark = pytest.mark.django_db


def decision(*touches, action="merge"):
    return AuditEntry.objects.record(
        actor=None,
        action=AuditAction.decision(action),
        target_type=AuditTarget.REVIEW_ITEM,
        target_id="d1",
        data={"item": "d1", "touches": list(touches)},
    )


def test_a_later_decision_naming_a_touched_object_depends_on_it():
    first = decision("drawer:12", "drawer:7")
    same = decision("drawer:7", "drawer:40")
    assert dependents(first) == [same]


def test_an_id_that_only_starts_with_a_touched_one_is_another_object():
    first = decision("drawer:12", "drawer:7")
    decision("drawer:123", "drawer:70")
    decision("entity:12", "entity:7")
    assert dependents(first) == []


def test_an_earlier_or_reverted_decision_is_no_dependent():
    earlier = decision("drawer:12", "drawer:7")
    first = decision("drawer:12", "drawer:7")
    later = decision("drawer:12", "drawer:9")
    AuditEntry.objects.record(
        actor=None,
        action=AuditAction.REVIEW_REVERT,
        target_type=AuditTarget.DECISION,
        target_id=later.pk,
        reverts=later,
    )
    assert dependents(first) == []
    assert dependents(earlier) == [first]


def test_a_batch_touching_more_than_the_narrowed_objects_finds_them_all_the_same():
    """Past NARROWED_TOUCHES the later decisions are read whole and tested here: the same ones."""
    batch = [decision(f"drawer:{n}", f"drawer:{n + 1000}") for n in range(NARROWED_TOUCHES)]
    later = decision("drawer:7", "drawer:5000")
    decision("drawer:70000", "drawer:70001")
    assert len({t for e in batch for t in e.data["touches"]}) > NARROWED_TOUCHES
    assert _batch_dependents(batch) == [later]
    assert _batch_dependents(batch[:3]) == []
