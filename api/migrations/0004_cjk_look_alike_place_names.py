"""Wings and rooms stored under a name that looks like another beside a CJK letter get the name a
write gives them now.

Since 2026-12-07 a joiner (U+200C, U+200D) or a variation selector beside a letter of Han,
Hiragana, Katakana or Hangul (its syllables and its letters that do not conjoin) is taken out of
a new name as it was beside a Latin letter (`dedup.invisible`, `dedup.validation.label_form`):
those scripts are neither joined nor formed into conjuncts, so "東京\u200d", "東\u200c京" and
"東京\ufe0f" are "東京", where each was a wing of its own that looked like "東京" and that a key
made for "東京" did not reach. An ideographic variation selector after a Han ideograph
("葛\U000e0100") is folded too (why: beside the rule, below). Names are looked up in that form
(`lookup_form`), so a wing stored as "東京\u200d" is no longer found by its own name: this
migration gives each such wing and room the new form, as `api/0003` did for Latin letters.

The machinery of `api/0003`, with the rule of today: where the new name is taken already (a wing
"東京" beside "東京\u200d"), or two stored names take one, only the first (oldest) that is free
is renamed, the others stay apart as they are, are printed, and `manage.py name_twins` lists
them (a curator moves the rooms of one into the other, or renames it); nothing is merged. A name
the rule leaves blank to the eye is not renamed. Each rename is audited (`wing.rename`,
`room.rename`, by "system", this migration in its data); an agent key naming a wing in another
form names it in the new one, unless that form is still a stored wing's (a twin left apart); a
sweep run not yet planned follows its renamed wing and room.

Entities, aliases and drawer names are not touched, as `api/0003` touched none: an entity's name
never changes, and a new sighting's name is given the new form before it is looked up.

The rule is a frozen copy of `dedup.invisible` and `label_form` as they are now (a test holds
it to the live ones), so changing the code never changes what this migration did. The reverse
changes nothing; running it again renames nothing more.
"""

import re
import unicodedata

from django.db import migrations

BATCH_SIZE = 1000
MIGRATION = "api.0004_cjk_look_alike_place_names"
NAME_MAX_LENGTH = 100  # palace_wing.name, palace_room.name
REPORTED = 20  # names left apart printed by name (`manage.py name_twins` lists every one)

# `dedup.invisible` (and `dedup.validation.label_form`) as of this migration.
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_JOINERS = frozenset("\u200c\u200d")
_DRAWN = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2")
_DRAWN |= {"\U000110bd", "\U000110cd"}
_KEPT_FORMAT = _JOINERS | _DRAWN
_BLACK_FLAG, _TAGS = "\U0001f3f4", ("\U000e0020", "\U000e007f")

# Drawn as a blank cell, a space to the eye but not to Python (`str.isspace`): the Braille
# pattern blank, which made a wing that showed as nothing, or as "alpha" ("alpha\u2800").
BLANKS = frozenset("\u2800")
_ENDS = re.compile(r"^[\s\u2800]+|[\s\u2800]+$")

# Where a joiner or a variation selector can change nothing that is drawn, it is taken out, so
# that "alpha\u200d", "al\u200cpha" and "alpha\ufe0f" are "alpha". Latin, Greek and Cyrillic
# letters are neither joined nor formed into conjuncts, and no variation sequence starts with
# one (a ZWNJ between two Latin letters can keep a font from a ligature, "Auf\u200clage": a
# nuance given up, as "al\u200cpha" looked like "alpha"); no ASCII character is either, but
# the digits, # and *, which start keycaps (U+FE0F, then U+20E3), kept only there.
#
# Nor are the letters of Han, Hiragana, Katakana and Hangul (its syllables and its letters that
# do not conjoin; the conjoining jamo, which a joiner can keep from forming a syllable, are not
# plain): "東京\u200d" and "東京\ufe0f" are "東京". A variation selector after a Han ideograph
# can choose a glyph: the ideographic ones (VS17 to VS256, the Ideographic Variation Database's
# "葛\U000e0100") and VS1 to VS3 (the variants of compatibility ideographs). It is taken out
# all the same, a look-alike folded: the variant is the same character to a reader, and a font
# without it draws the ideograph as it is, one variant of it, so "葛\U000e0100" and "葛" look
# the same in one font or the other; a sequence no database registers ("東\U000e0100") changes
# nothing anywhere, and which are registered is not the rule's to know. Unicode folds them out
# of identifiers too (NFKC_Casefold drops every variation selector, IDNA refuses them), and NFC
# already gives a compatibility ideograph its unified character ("\ufa47" is "漢"). What is
# given up is the registered glyph in a name, as the ligature was. An emoji's selector after a
# CJK symbol ("㊗\ufe0f", drawn as an emoji) is kept: a symbol is no letter.
_PLAIN_SCRIPTS = frozenset(
    {"LATIN", "GREEK", "CYRILLIC", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HENTAIGANA"}
    | {"IDEOGRAPHIC"}  # Han's iteration and closing marks, letters: "々"
)
_PLAIN_NAMES = (  # the start of a plain letter's name where no word of it says its script
    "CJK UNIFIED IDEOGRAPH-",
    "CJK COMPATIBILITY IDEOGRAPH-",
    "HANGUL SYLLABLE ",
    "HANGUL LETTER ",
    "HALFWIDTH HANGUL LETTER ",
)
_SEQUENCE_STARTS = frozenset("0123456789#*")
KEYCAP = "\u20e3"
_EDGE, _PLAIN, _LETTER, _OTHER = range(4)


def selector(c: str) -> bool:
    """A variation selector: the standardized ones (VS1 to VS16: U+FE0F draws an emoji), the
    ideographic ones (VS17 to VS256), Mongolian's free ones."""
    return (
        "\ufe00" <= c <= "\ufe0f"
        or "\U000e0100" <= c <= "\U000e01ef"
        or "\u180b" <= c <= "\u180d"
        or c == "\u180f"
    )


def _unseen(c: str) -> bool:
    """Drawn as nothing on its own: a filler, a format character that is not drawn, a joiner,
    a variation selector."""
    return (
        c in _FILLERS
        or selector(c)
        or (unicodedata.category(c) == "Cf" and c not in _DRAWN)  # a joiner, a tag too
    )


def _plain(c: str) -> bool:
    """ASCII, or a letter of Latin, Greek, Cyrillic, Han, Hiragana, Katakana or Hangul (not a
    conjoining jamo); its Unicode name says which: "LATIN SMALL LETTER A", "FULLWIDTH LATIN
    CAPITAL LETTER A", "HIRAGANA LETTER A", "CJK UNIFIED IDEOGRAPH-6771", "HANGUL SYLLABLE GA"."""
    if c.isascii():
        return True
    if not unicodedata.category(c).startswith("L"):
        return False
    name = unicodedata.name(c, "")
    return name.startswith(_PLAIN_NAMES) or not _PLAIN_SCRIPTS.isdisjoint(name.split())


def _base(value: str, index: int) -> str | None:
    """The character a mark at `index` is drawn on: the first before it that is no mark."""
    while index >= 0 and unicodedata.category(value[index]).startswith("M"):
        index -= 1
    return value[index] if index >= 0 else None


def _side(c: str | None) -> int:
    if c is None or c.isspace() or c in BLANKS:
        return _EDGE
    if _plain(c):
        return _PLAIN
    return _LETTER if unicodedata.category(c).startswith("L") else _OTHER


def _joins(value: str, index: int) -> bool:
    """Whether the joiner at `index` can change what is drawn: beside a letter of a script
    that joins or forms conjuncts (Arabic and Persian, Devanagari and the other Indic scripts,
    a mark on such a letter: a virama), or between two characters of neither kind (an emoji
    ZWJ sequence: "👩\u200d💻"). Beside an end, a space, or a plain letter (`_plain`: Latin,
    Greek, Cyrillic, CJK) or ASCII on both sides, it shapes nothing: "alpha\u200d",
    "東\u200d京", "👍\u200d". Characters that show nothing beside it are looked past."""
    before, after = index - 1, index + 1
    while before >= 0 and _unseen(value[before]):
        before -= 1
    while after < len(value) and _unseen(value[after]):
        after += 1
    left = _side(_base(value, before) if before >= 0 else None)
    right = _side(value[after] if after < len(value) else None)  # a mark: other
    return _LETTER in (left, right) or left == right == _OTHER


def _selects(value: str, index: int) -> bool:
    """Whether the variation selector at `index` can change what is drawn: right after a
    character a variation sequence can start with (an emoji, a CJK symbol, a letter of
    Myanmar or Mongolian; a digit, # or * only in a keycap, "db-2\ufe0f" being "db-2" to the
    eye). At the start, after a space, a mark, another character that shows nothing, a plain
    letter (`_plain`; a Han ideograph's variant is folded, above) or other ASCII, it selects
    nothing to tell apart: "alpha\ufe0f", "東京\U000e0100", "\ufe0f" alone."""
    if index == 0:
        return False
    before = value[index - 1]
    if before in _SEQUENCE_STARTS:  # a keycap ("1\ufe0f\u20e3"); "1\ufe0f" alone looks like 1
        return value[index + 1 : index + 2] == KEYCAP
    if _unseen(before) or unicodedata.category(before).startswith("M"):
        return False
    return _side(before) in (_LETTER, _OTHER)


def visible(value: str) -> str:
    """The value without the characters that show nothing (above)."""
    kept: list[str] = []
    flag = False  # in the tags after a black flag
    for index, c in enumerate(value):
        if _TAGS[0] <= c <= _TAGS[1]:
            if flag:
                kept.append(c)
            continue
        flag = c == _BLACK_FLAG
        if c in _FILLERS or (unicodedata.category(c) == "Cf" and c not in _KEPT_FORMAT):
            continue
        if c in _JOINERS and not _joins(value, index):
            continue
        if selector(c) and not _selects(value, index):
            continue
        kept.append(c)
    return "".join(kept)


def trimmed(value: str) -> str:
    """The value without spaces at its ends, the Braille blank's too."""
    return _ENDS.sub("", value)


def shows_nothing(value: str) -> bool:
    """Whether a text is blank to the eye: nothing but spaces (the Braille blank too) and
    characters drawn as nothing on their own (those `visible` takes out, a joiner, a variation
    selector, which shape or choose how the character beside them is drawn). "" is blank."""
    return all(c.isspace() or c in BLANKS or _unseen(c) for c in value)


def label_form(value):
    form = trimmed(unicodedata.normalize("NFC", visible(value)))
    while (again := trimmed(unicodedata.normalize("NFC", visible(form)))) != form:
        form = again
    return form


def _composed(name):
    """The name to give a stored one, or None: unchanged, blank to the eye (a name of fillers
    or selectors alone, which `api/0002` left too), or too long for the column."""
    new = label_form(name)
    if new == name or shows_nothing(new) or len(new) > NAME_MAX_LENGTH:
        return None
    return new


def _batches(queryset, *fields):
    """`fields` (the id first) of every row, in batches by id."""
    last = 0
    while True:
        rows = queryset.filter(id__gt=last).order_by("id").values_list("id", *fields)
        batch = list(rows[:BATCH_SIZE])
        if not batch:
            return
        yield batch
        last = batch[-1][0]


class Outcome:
    """What was renamed (old name -> new, by wing id for rooms) and what was left apart."""

    def __init__(self):
        self.wings = {}  # old wing name -> new
        self.rooms = {}  # (wing id, old room name) -> new
        self.apart = {"wing": [], "room": []}

    def audit(self, apps, kind, renamed):
        """`renamed`: (id, before, after) of one batch."""
        entry = apps.get_model("palace", "AuditEntry")
        entry.objects.bulk_create(
            entry(
                actor_label="system",
                action=f"{kind}.rename",
                target_type=kind,
                target_id=str(pk),
                before=before,
                after=after,
                data={"migration": MIGRATION},
            )
            for pk, before, after in renamed
        )


def _rename_wings(apps, outcome):
    wing = apps.get_model("palace", "Wing")
    for batch in _batches(wing.objects.all(), "name"):
        wanted = [(pk, name, new) for pk, name in batch if (new := _composed(name))]
        if not wanted:
            continue
        taken = set(
            wing.objects.filter(name__in={new for _, _, new in wanted}).values_list(
                "name", flat=True
            )
        )
        renamed = []
        for pk, name, new in wanted:
            if new in taken:
                outcome.apart["wing"].append((name, new))
                continue
            taken.add(new)
            renamed.append((pk, {"name": name}, {"name": new}))
            outcome.wings[name] = new
        wing.objects.bulk_update(
            [wing(id=pk, name=after["name"]) for pk, _, after in renamed], ["name"]
        )
        outcome.audit(apps, "wing", renamed)


def _rename_rooms(apps, outcome):
    room = apps.get_model("palace", "Room")
    for batch in _batches(room.objects.all(), "wing_id", "wing__name", "name"):
        wanted = [
            (pk, wing_id, wing_name, name, new)
            for pk, wing_id, wing_name, name in batch
            if (new := _composed(name))
        ]
        if not wanted:
            continue
        taken = set(
            room.objects.filter(
                wing_id__in={row[1] for row in wanted}, name__in={row[4] for row in wanted}
            ).values_list("wing_id", "name")
        )
        renamed = []
        for pk, wing_id, wing_name, name, new in wanted:
            if (wing_id, new) in taken:
                outcome.apart["room"].append((f"{wing_name}/{name}", new))
                continue
            taken.add((wing_id, new))
            place = {"wing": wing_name}
            renamed.append((pk, {**place, "name": name}, {**place, "name": new}))
            outcome.rooms[wing_id, name] = new
        room.objects.bulk_update(
            [room(id=pk, name=after["name"]) for pk, _, after in renamed], ["name"]
        )
        outcome.audit(apps, "room", renamed)


def _follow_in_keys(apps, outcome):
    """A key's wings in the form a request's wing is judged in (composed: `Scope.reaches`), so
    a key naming a wing in another form (one renamed here, or one written composed since
    2026-12-06 while the key kept the form it was typed in) still reaches it; but a name that
    is still a stored wing's (a twin left apart) stays as it is: that key was made for that
    wing, and holds it, not its look-alike."""
    wing = apps.get_model("palace", "Wing")
    key_model = apps.get_model("api", "AgentKey")
    for key in key_model.objects.only("id", "wings").iterator(chunk_size=BATCH_SIZE):
        if not isinstance(key.wings, list):
            continue
        other = [w for w in key.wings if isinstance(w, str) and w != "*" and label_form(w) != w]
        if not other:
            continue
        kept = set(wing.objects.filter(name__in=other).values_list("name", flat=True))
        wings = {w if w in kept or w not in other else (label_form(w) or w) for w in key.wings}
        key.wings = sorted(wings)
        key.save(update_fields=["wings"])


def _follow_in_unplanned_runs(apps, outcome):
    """A run with no parts yet looks its rooms up by its wing's and room's names when it starts."""
    if not (outcome.wings or outcome.rooms):
        return
    run_model = apps.get_model("review", "SweepRun")
    wing_model = apps.get_model("palace", "Wing")
    runs = run_model.objects.filter(parts__isnull=True, entities=False).exclude(wing="")
    for run in runs.exclude(status="done"):
        wing_name = outcome.wings.get(run.wing, run.wing)
        room_name = run.room
        if run.room:
            wing = wing_model.objects.filter(name=wing_name).first()
            if wing is not None:
                room_name = outcome.rooms.get((wing.pk, run.room), run.room)
        if (wing_name, room_name) == (run.wing, run.room):
            continue
        scope = {"wing": wing_name, "room": room_name, "entities": False}
        if run_model.objects.filter(status__in=("queued", "running"), **scope).exists():
            continue  # another run of the new scope holds it (one_unfinished_sweep_per_scope)
        run.wing, run.room = wing_name, room_name
        run.save(update_fields=["wing", "room"])


def _report(outcome):
    apart = outcome.apart
    if not (outcome.wings or outcome.rooms or apart["wing"] or apart["room"]):
        return
    print(
        f"\n  Look-alike names beside CJK letters: {len(outcome.wings)} wings and "
        f"{len(outcome.rooms)} rooms renamed (audited: wing.rename, room.rename)."
    )
    left = [(kind, name, new) for kind, rows in apart.items() for name, new in rows]
    for kind, name, new in left[:REPORTED]:
        print(f"  The {kind} {name!a} stays apart: {new!r} is another {kind}'s name.")
    if left:
        more = f" ({len(left) - REPORTED} more)" if len(left) > REPORTED else ""
        print(
            f"  {len(left)} names stay apart from a look-alike{more}; nothing was merged: "
            "`manage.py name_twins` lists them."
        )


def cjk_look_alike_place_names(apps, schema_editor):
    outcome = Outcome()
    _rename_wings(apps, outcome)
    _rename_rooms(apps, outcome)
    _follow_in_keys(apps, outcome)
    _follow_in_unplanned_runs(apps, outcome)
    _report(outcome)


class Migration(migrations.Migration):
    dependencies = [("api", "0003_look_alike_place_names")]

    operations = [migrations.RunPython(cjk_look_alike_place_names, migrations.RunPython.noop)]
