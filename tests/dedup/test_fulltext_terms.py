"""The full-text terms (palace/fulltext.py): one term per word and room, on both databases. A
lookup in a room reads that room's words only, a search reads every room's, and the terms are the
normalised words exactly, whatever the script (but a script written without spaces, whose long
runs are cut into pieces: `dedup.policy.index_text`)."""

import pytest
from django.db import connection

from dedup import candidates, policy, services
from dedup.search import drawers_search
from palace import fulltext
from palace.models import Drawer

pytestmark = pytest.mark.django_db

# Scripts whose words unicode61 split (vowel signs, viramas, tone marks are not letters to it) or
# that a locale-bound parser could: each text and a one-typo variant of it.
TEXTS = {
    "devanagari": "यह किताब बहुत अच्छी है और मुझे पसंद है, क्षत्रिय राजा की कहानी पढ़ो",
    "thai": "นักพัฒนาซอฟต์แวร์ต้องทดสอบระบบก่อนปล่อยเวอร์ชันใหม่ทุกครั้ง ไม่มีข้อยกเว้น เด็ดขาด",
    "cyrillic": "Разработчики должны запускать миграции базы данных перед перезапуском",
    "greek": "Οι προγραμματιστές πρέπει να εκτελούν μεταναστεύσεις βάσης δεδομένων πρώτα",
    "cjk": "数据库迁移 必须在 重启服务之前 运行 否则 服务会失败 每次部署都要检查",
    "combining": "Cafe\u0301 de\u0301ja\u0300 vu: the re\u0301sume\u0301 of the na\u0131\u0308ve",
}


def typo(text: str) -> str:
    """One letter of the text's longest word doubled: a one-edit variant."""
    word = max(text.split(), key=len)
    return text.replace(word, word[:3] + word[2] + word[3:], 1)


def terms_of(drawer: Drawer) -> set[str]:
    """The terms the index holds for a drawer, read from the index itself (SQLite: each term of
    the FTS5 vocabulary that matches the drawer)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"SELECT tsvector_to_array({fulltext.postgresql_document()}) "
                "FROM palace_drawer WHERE id = %s",
                [drawer.pk],
            )
            return set(cursor.fetchone()[0])
        cursor.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocabulary "
            "USING fts5vocab(main, palace_drawer_fts, row)"
        )
        cursor.execute("SELECT term FROM temp.vocabulary")
        terms = [row[0] for row in cursor.fetchall()]
        held = set()
        for term in terms:
            cursor.execute(
                "SELECT 1 FROM palace_drawer_fts WHERE palace_drawer_fts MATCH %s AND rowid = %s",
                [f'"{term}"', drawer.pk],
            )
            if cursor.fetchone():
                held.add(term)
        return held


@pytest.mark.parametrize("script", sorted(TEXTS))
def test_a_variant_in_any_script_is_linked_to_its_original(dedup_settings, script):
    room = services.room_get_or_create(wing="langs", room=script)
    original = services.drawer_write(room=room, content=TEXTS[script]).drawer
    variant = services.drawer_write(room=room, content=typo(TEXTS[script]))
    assert [link.older_id for link in variant.links] == [original.pk]


@pytest.mark.parametrize("script", sorted(TEXTS))
def test_the_terms_are_the_normalised_words_of_the_room(dedup_settings, script):
    room = services.room_get_or_create(wing="langs", room=script)
    drawer = services.drawer_write(room=room, content=TEXTS[script]).drawer
    # The normalised words, but in a script written without spaces (Thai; the Chinese here has
    # spaces, and words of UNSPACED_WHOLE_MAX or fewer) the pieces of each (`policy.index_text`).
    words = set(policy.indexed_text(policy.normalize_text(TEXTS[script])).split(" "))
    assert terms_of(drawer) == {f"{word}{fulltext.ROOM_MARK}{room.pk}" for word in words}


def test_a_moved_drawer_s_terms_move_with_it(dedup_settings):
    room = services.room_get_or_create(wing="w", room="from")
    elsewhere = services.room_get_or_create(wing="w", room="to")
    drawer = services.drawer_write(room=room, content="Rotate the signing keys monthly.").drawer
    Drawer.objects.filter(pk=drawer.pk).update(room=elsewhere)
    assert terms_of(drawer) == {
        f"{word}{fulltext.ROOM_MARK}{elsewhere.pk}" for word in ("rotate", "the", "signing")
    } | {f"{word}{fulltext.ROOM_MARK}{elsewhere.pk}" for word in ("keys", "monthly")}


def test_a_lookup_never_reads_another_room_s_drawers(dedup_settings):
    text = "Rotate the signing keys of the payment gateway every month without fail."
    room = services.room_get_or_create(wing="w", room="a")
    other = services.room_get_or_create(wing="w", room="b")
    services.drawer_write(room=other, content=text)
    scope = candidates.Scope(room=room)
    found = candidates.for_text(scope, "", None, policy.query_words(text))
    assert found.lexical == []


def test_a_search_reads_every_room_s_terms(dedup_settings):
    text = "Rotate the signing keys of the payment gateway every month without fail."
    stored = [services.drawer_write_in(wing="w", room=name, content=text).drawer for name in "ab"]
    page = drawers_search(query="signing gateway", wing="w")
    assert {hit.drawer.pk for hit in page.hits} == {drawer.pk for drawer in stored}


def test_a_search_word_is_not_a_prefix_of_longer_words(dedup_settings):
    """The terms of a word in any room are asked by prefix (the word and the room mark), so a
    longer word that starts with it is not found."""
    services.drawer_write_in(wing="w", room="a", content="The signings were postponed again.")
    assert drawers_search(query="signing", wing="w").hits == []
    assert len(drawers_search(query="signings", wing="w").hits) == 1


def test_a_word_longer_than_the_index_keeps_is_written_and_not_asked(dedup_settings):
    """PostgreSQL keeps words of at most POSTGRESQL_MAX_WORD_BYTES; no query asks a word over
    `policy.QUERY_WORD_MAX_CHARS`, and the text's other words still find its variant."""
    blob = "\u0436" * 1100  # 2,200 bytes in UTF-8
    room = services.room_get_or_create(wing="w", room="blobs")
    text = f"Attachment {blob} uploaded by the release pipeline tonight."
    original = services.drawer_write(room=room, content=text).drawer
    variant = services.drawer_write(room=room, content=text.replace("tonight", "tonihgt"))
    assert [link.older_id for link in variant.links] == [original.pk]
    assert blob not in policy.query_words(text)


def test_variants_of_sentences_written_without_spaces_are_linked_in_a_full_room(dedup_settings):
    """A sentence of Chinese with no punctuation is one word of its normalised text; a variant
    breaks it whole. Its pieces (`policy.index_text`) are what the index holds and the write
    asks, alone or with their neighbours, so in a room of 300 such sentences each one-character
    variant finds its original (none did when the index held the whole sentence)."""
    import random

    rng = random.Random(3)
    han = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现"
    room = services.room_get_or_create(wing="langs", room="han")
    originals = []
    for _ in range(300):
        text = "".join(rng.choice(han) for _ in range(rng.randint(20, 60)))
        originals.append(services.drawer_write(room=room, content=text).drawer)
    missed = []
    for original in rng.sample(originals, 30):
        text, at = original.content, rng.randrange(len(original.content))
        variant = text[:at] + rng.choice(han) + text[at + 1 :]
        if variant == text:
            variant = text[:at] + text[at + 1 :]
        linked = services.drawer_write(room=room, content=variant).links
        if original.pk not in [link.older_id for link in linked]:
            missed.append(variant)
    assert missed == []


def test_the_terms_follow_the_index_text_and_the_room(dedup_settings):
    """The terms are the index text's while it has one, the normalised text's once it has none
    (the triggers on SQLite, the index's expression on PostgreSQL), in the drawer's room as it
    moves; a deletion leaves the index sound (FTS5's integrity check)."""
    sentence = "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了"
    room = services.room_get_or_create(wing="langs", room="from")
    other = services.room_get_or_create(wing="langs", room="to")
    drawer = services.drawer_write(room=room, content=sentence).drawer
    pieces = drawer.index_text.split(" ")

    def terms(words, where):
        return {f"{word}{fulltext.ROOM_MARK}{where.pk}" for word in words}

    assert terms_of(drawer) == terms(pieces, room)
    Drawer.objects.filter(pk=drawer.pk).update(index_text=None)
    assert terms_of(drawer) == terms([sentence], room)
    Drawer.objects.filter(pk=drawer.pk).update(index_text=" ".join(pieces), room=other)
    assert terms_of(drawer) == terms(pieces, other)
    Drawer.objects.filter(pk=drawer.pk).delete()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO palace_drawer_fts(palace_drawer_fts) VALUES ('integrity-check')"
            )
        assert terms_of(drawer) == set()
