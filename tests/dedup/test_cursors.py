"""Sealed cursors (`dedup.cursors`): what they hold reads back, a client reads nothing of it, and
a cursor changed, forged, sealed under another key or for another list is `invalid_cursor`."""

from __future__ import annotations

import base64

import pytest

from dedup import cursors, validation
from dedup.errors import InvalidInput

VALUES = [3, 4242]
LIST = cursors.list_identity("search", groups=[["kestrel"]], wing=None)


def invalid(cursor: str) -> str:
    with pytest.raises(InvalidInput) as refused:
        cursors.values_of(cursor, len(VALUES), bound=LIST)
    return refused.value.code


def test_a_cursor_reads_back_what_it_holds():
    assert cursors.values_of(cursors.cursor_for(VALUES, bound=LIST), 2, bound=LIST) == VALUES


def test_a_cursor_holds_no_readable_value():
    """Before, base64 of "[3, 4242]": the drawer's global id, read by anyone."""
    raw = base64.urlsafe_b64decode(cursors.cursor_for(VALUES, bound=LIST) + "==")
    assert validation.cursor_of(VALUES).encode() not in raw


def test_a_cursor_is_no_longer_plain_json():
    with pytest.raises(InvalidInput):
        validation.cursor_values(cursors.cursor_for(VALUES, bound=LIST), 2)


def test_the_same_position_is_sealed_anew_each_time():
    assert cursors.cursor_for(VALUES, bound=LIST) != cursors.cursor_for(VALUES, bound=LIST)


@pytest.mark.parametrize("at", [0, 5, 20])
def test_a_cursor_changed_by_one_character_is_refused(at):
    cursor = cursors.cursor_for(VALUES, bound=LIST)
    changed = cursor[:at] + ("A" if cursor[at] != "A" else "B") + cursor[at + 1 :]
    assert invalid(changed) == "invalid_cursor"


@pytest.mark.parametrize(
    "cursor",
    [validation.cursor_of(VALUES), "", "!!!", "é" * 40, "A" * 600, "AAAA"],
    ids=["unsealed", "empty", "not base64", "not ascii", "too long", "too short"],
)
def test_a_cursor_the_app_did_not_seal_is_refused(cursor):
    assert invalid(cursor) == "invalid_cursor"


def test_a_cursor_sealed_under_another_key_is_refused(settings):
    cursor = cursors.cursor_for(VALUES, bound=LIST)
    settings.SECRET_KEY = "another-secret-key-" * 3
    assert invalid(cursor) == "invalid_cursor"


def test_a_cursor_sealed_before_a_key_rotation_still_reads(settings):
    cursor = cursors.cursor_for(VALUES, bound=LIST)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "another-secret-key-" * 3
    assert cursors.values_of(cursor, 2, bound=LIST) == VALUES


def test_a_long_text_is_sealed_whole():
    """Longer than one block of the keystream (the queue's cursors hold a time)."""
    values = ["2026-12-07T10:27:32.148000+00:00", "d", 7, "x" * 200]
    assert cursors.values_of(cursors.cursor_for(values, bound=LIST), 4, bound=LIST) == values


@pytest.mark.parametrize(
    "values",
    [[3, 4242], [3, 42_420_000_000], [0, 9_223_372_036_854_775_807]],
    ids=["4 digits", "11 digits", "19 digits"],
)
def test_a_cursor_s_length_tells_nothing_of_the_id_it_holds(values):
    """AES-GCM keeps the text's length: unpadded, a cursor's length told how many digits the
    store's global drawer id has (how many drawers the whole store holds, within a factor of
    ten), which sealing was to hide."""
    assert len(cursors.cursor_for(values, bound=LIST)) == len(
        cursors.cursor_for([3, 1], bound=LIST)
    )
    assert cursors.values_of(cursors.cursor_for(values, bound=LIST), 2, bound=LIST) == values


def test_a_drf_list_cursor_s_length_tells_nothing_of_its_position():
    short = cursors.sealed(base64.b64encode(b"p=7").decode(), bound=LIST)
    long = cursors.sealed(base64.b64encode(b"r=1&p=9223372036854775807&o=100").decode(), bound=LIST)
    assert len(short) == len(long)
    assert (
        cursors.unsealed(long, bound=LIST)
        == base64.b64encode(b"r=1&p=9223372036854775807&o=100").decode()
    )


OTHER_LISTS = {
    "another kind": cursors.list_identity("queue", groups=[["kestrel"]], wing=None),
    "another query": cursors.list_identity("search", groups=[["probe"]], wing=None),
    "another filter": cursors.list_identity("search", groups=[["kestrel"]], wing="alpha"),
    "no list": b"",
}


@pytest.mark.parametrize("other", OTHER_LISTS.values(), ids=OTHER_LISTS.keys())
def test_a_cursor_of_another_list_is_refused(other):
    """Bound to its list (AES-GCM's associated data): it does not open for another."""
    cursor = cursors.cursor_for(VALUES, bound=LIST)
    with pytest.raises(InvalidInput) as refused:
        cursors.values_of(cursor, 2, bound=other)
    assert refused.value.code == "invalid_cursor"


def test_a_list_s_identity_does_not_depend_on_the_order_its_filters_are_named_in():
    named = cursors.list_identity("list", path="/api/x", filters={"a": ["1"], "b": ["2"]})
    assert named == cursors.list_identity("list", filters={"b": ["2"], "a": ["1"]}, path="/api/x")
