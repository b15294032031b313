"""The later decisions a revert waits for are found by the database from the objects they
touched: exactly those naming one of the decision's, by its whole id."""

import pytest

from palace.models import AuditAction, AuditEntry, AuditTarget
from review.services.reverts import dependents

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
