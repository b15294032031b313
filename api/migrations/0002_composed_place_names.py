"""Wings and rooms stored before new names were composed get the name a write gives them today.

Since 2026-12-06 a new wing or room is given its name by `dedup.validation.label_form`: Unicode's
composed form (NFC), without the characters that show nothing (a zero-width space, U+202E, the
fillers...), trimmed. Names stored before keep the form they were typed in, and names are looked
up as stored: a wing stored as "cafe\u0301" (decomposed) was not found by "café" (composed, as
most keyboards type it), so that write made a second wing that looks the same, and so for rooms
and for "no\u200btes" beside "notes". This migration renames each such wing and room to its
`label_form`, so the name a write gives a new one finds it.

Only wings and rooms. An entity's name and an alias are kept as first written, by design (a
canonical name is never rewritten), and are not found by their name but by their key, which is
folded (NFC, casefold: `dedup.policy.entity_key`) and was computed again for every name holding
a mark by dedup 0017: "Café" sighted now converges on an entity stored as "Cafe\u0301" (rule
`normalized`). A drawer's name is kept as written today too (it is not given a composed form),
so old and new names are alike there.

Where the composed name is taken already (the twins that exist now: "café" was created beside
"cafe\u0301"), or two stored names compose to one, only the first (oldest) one that is free is
renamed and the others stay apart as they are: merging two wings would move drawers between
them, a curator's decision (a wrong merge is worse than a missed one), and a migration cannot
ask. They are printed at the end, and `manage.py name_twins` lists them any time (a curator
moves the rooms of one into the other in the admin, or renames it). A composed name longer than
the column (NFC lengthens a few characters) or blank (fillers only) is not given either.

Each rename is audited as the admin's are (`wing.rename`, `room.rename`; no actor, "system"),
with this migration named in its data. What reached a renamed wing by its name still does:

- an agent key naming a wing in another form names it composed, as a request's wing is judged
  (a key typed `beta\u200b` names `beta`), unless that form is a stored wing's still (a twin
  left apart: the key was made for it);
- a sweep run not yet planned (no parts: it looks its rooms up by name when it starts) has its
  wing and room renamed with them.

The audit log's rows, an import's recorded wings and a finished run's scope are history and keep
the names they were written with.

Here, in the api app, because an agent key names wings: the renames and the keys that name them
change in one transaction, and api is the app that may depend on palace and review both (api ->
review -> dedup -> palace). The rule is a frozen copy of `label_form` as it is now (a test holds
it to the live one), so changing the code never changes what this migration did. Rows are read
in batches by id; each batch asks in one query which of its composed names are taken.

The reverse changes nothing: the composed names are those new wings get, which the release
before serves as it serves a wing created since (a write of either form finds it), and the audit
rows name every former name. Running it again renames nothing more.
"""

import unicodedata

from django.db import migrations

BATCH_SIZE = 1000
MIGRATION = "api.0002_composed_place_names"
NAME_MAX_LENGTH = 100  # palace_wing.name, palace_room.name
REPORTED = 20  # names left apart printed by name (`manage.py name_twins` lists every one)

# `dedup.validation.visible` and `label_form` as of this migration.
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_JOINERS = frozenset("\u200c\u200d")
_DRAWN = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2")
_DRAWN |= {"\U000110bd", "\U000110cd"}
_KEPT_FORMAT = _JOINERS | _DRAWN
_BLACK_FLAG, _TAGS = "\U0001f3f4", ("\U000e0020", "\U000e007f")


def _visible(value):
    kept = []
    flag = False  # in the tags after a black flag
    for c in value:
        if _TAGS[0] <= c <= _TAGS[1]:
            if flag:
                kept.append(c)
            continue
        flag = c == _BLACK_FLAG
        if c in _FILLERS or (unicodedata.category(c) == "Cf" and c not in _KEPT_FORMAT):
            continue
        kept.append(c)
    return "".join(kept)


def label_form(value):
    return unicodedata.normalize("NFC", _visible(value)).strip()


def _composed(name):
    """The name to give a stored one, or None: unchanged, blank, or too long for the column."""
    new = label_form(name)
    if new == name or not new or len(new) > NAME_MAX_LENGTH:
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
        f"\n  Composed names: {len(outcome.wings)} wings and {len(outcome.rooms)} rooms renamed "
        "(audited: wing.rename, room.rename)."
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


def composed_place_names(apps, schema_editor):
    outcome = Outcome()
    _rename_wings(apps, outcome)
    _rename_rooms(apps, outcome)
    _follow_in_keys(apps, outcome)
    _follow_in_unplanned_runs(apps, outcome)
    _report(outcome)


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_agent_keys"),
        ("palace", "0028_drawer_restatement_import_found"),
        ("review", "0010_undo_offers"),
    ]

    operations = [migrations.RunPython(composed_place_names, migrations.RunPython.noop)]
