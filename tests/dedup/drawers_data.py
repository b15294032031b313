"""Drawers stored as a bulk load stores them (no write path), for the candidate tests."""

from dedup import policy
from palace.models import Drawer


def bulk_drawers(room, texts) -> list[Drawer]:
    """The texts as drawers of the room, with the columns the write path derives."""
    return Drawer.objects.bulk_create(
        Drawer(
            room=room,
            content=text,
            content_hash=policy.content_hash(text),
            normalized_content=policy.normalize_text(text),
            fingerprint=policy.fingerprint(text),
        )
        for text in texts
    )


class IndexAsked:
    """Stands in for `room_words.words_in_room` (`spy_index`), recording each call's words and
    options: the words held are `held`'s (all of them for `ALL`), or the real index's."""

    ALL = object()

    def __init__(self, held, real):
        self.held = held
        self.real = real
        self.calls: list[tuple[list[str], dict]] = []

    def __call__(self, room_id, words, **options):
        self.calls.append((list(words), options))
        if self.held is None:
            return self.real(room_id, words, **options)
        if self.held is self.ALL:
            return set(words)
        return set(self.held) & set(words)

    @property
    def words(self) -> list[list[str]]:
        """The words of each call, in order."""
        return [words for words, _ in self.calls]

    @property
    def options(self) -> list[dict]:
        return [options for _, options in self.calls]


def spy_index(monkeypatch, held=None) -> IndexAsked:
    """Record what the room's index is asked (`words_in_room`, by the room's words and by a
    sweep's batch); answered from `held` (a collection of words, or `IndexAsked.ALL`) if given,
    else by the index itself."""
    from dedup.candidates import room_words, sweep_batch

    spy = IndexAsked(held, room_words.words_in_room)
    monkeypatch.setattr(room_words, "words_in_room", spy)
    monkeypatch.setattr(sweep_batch, "words_in_room", spy)
    return spy
