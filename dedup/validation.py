"""Input checks shared by every interface (API, admin, commands), so bad input is refused the
same way everywhere and before anything is written."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from dedup.errors import ContentTooLarge, EmptyLabel, InvalidInput
from dedup.invisible import shows_nothing, trimmed, visible
from palace.models import LABEL_MAX_LENGTH

KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
NAME_MAX_LENGTH = 200  # a drawer's, an entity's or an alias's name, and a checkpoint's id
AGENT_MAX_LENGTH = 150


# A drawer's `source` and a mention's `provenance`: where a memory came from (a file, a line, a
# URL, a tool call), a few hundred bytes. Capped, as JSON, well above that and far below the
# content's limit: a source of megabytes was stored, and every read of its room returned it.
METADATA_MAX_BYTES = 64 * 1024


def clean_metadata(value: object, field: str) -> dict[str, Any] | None:
    """A JSON object of at most METADATA_MAX_BYTES (as compact JSON), or None."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"{field} must be a JSON object.", details={"field": field})
    try:
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    except (TypeError, ValueError, UnicodeEncodeError) as error:  # not JSON, a lone surrogate
        raise InvalidInput(f"{field} must be plain JSON text.", details={"field": field}) from error
    if size > METADATA_MAX_BYTES:
        raise ContentTooLarge(
            f"{field} is {size} bytes as JSON; the limit is {METADATA_MAX_BYTES} bytes.",
            details={"field": field, "limit": METADATA_MAX_BYTES, "size": size},
        )
    return value


def clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string.", details={"field": "content"})
    if "\x00" in content:
        raise InvalidInput("content must not contain NUL bytes.", details={"field": "content"})
    limit = settings.CASTELLAN_MAX_CONTENT_BYTES
    size = len(content.encode("utf-8", errors="surrogatepass"))
    if size > limit:
        raise ContentTooLarge(
            f"content is {size} bytes; the limit is {limit} bytes.",
            details={"field": "content", "limit": limit, "size": size},
        )
    if not content.strip():
        raise InvalidInput("content must not be blank.", details={"field": "content"})
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInput(
            "content must be valid Unicode text.", details={"field": "content"}
        ) from error
    return content


def label_form(value: str) -> str:
    """The name a new wing or room is given (`clean_place_name`): trimmed (of the Braille blank
    too), in Unicode's composed form (NFC: "café" typed with a combining accent names the same
    new wing as "café"), without invisible characters (`visible`: a joiner or a variation
    selector where it changes nothing drawn, "alpha\u200d" is "alpha")."""
    form = trimmed(unicodedata.normalize("NFC", visible(value)))
    # Composing can make a letter beside which a joiner changes nothing ("\u2126\u200d", the
    # Ohm sign, is "Ω\u200d"): again until nothing changes, so a name is its own form.
    while (again := trimmed(unicodedata.normalize("NFC", visible(form)))) != form:
        form = again
    return form


def lookup_form(value: str) -> str:
    """The name a wing or room a client names is found by, and an agent key's wing is judged
    by: its composed form (`label_form`), the form every new wing and room is given and every
    stored one has had since `api/0002` (and `api/0003`: look-alikes by a joiner, a variation
    selector, the Braille blank; `api/0004`: by one beside a CJK letter); a name of fillers
    alone, which composes to nothing, as given, trimmed. One rule for writes, reads, dry runs,
    searches and keys: a read of "cafe\u0301" finds "café", and a key made for "beta\u200b"
    reaches the wing "beta" its writes land in, and no other."""
    return label_form(value) or value.strip()


def place_name(value: object, field: str) -> str:
    """A wing's or room's name as a request gives it, checked (`clean_label`) and in the form
    it is found by (`lookup_form`)."""
    return lookup_form(clean_label(value, field))


def clean_label(value: object, field: str, *, max_length: int = LABEL_MAX_LENGTH) -> str:
    """A wing, room, drawer or entity name as it is looked up: trimmed, not blank (nor only
    invisible format characters), no control characters. Names are found as they were stored,
    so one stored before in another form is still found by it."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.", details={"field": field})
    label = value.strip()
    if all(unicodedata.category(c) == "Cf" or c.isspace() for c in label):
        # Blank, or only characters that show nothing (a zero-width space, a joiner alone).
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    if len(label) > max_length:
        raise InvalidInput(
            f"{field} must be at most {max_length} characters.", details={"field": field}
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in label):
        raise InvalidInput(
            f"{field} must not contain control characters.", details={"field": field}
        )
    return label


def clean_name(value: object, field: str, *, max_length: int = LABEL_MAX_LENGTH) -> str:
    """A name something is given, as it is stored (a drawer's, an agent's; a wing's or room's
    in the admin): `clean_label`, and not one that shows nothing (`shows_nothing`: only a
    variation selector, a joiner, the Braille blank or a Hangul filler, which `clean_label`
    takes for letters so that a name stored so before is still found by it)."""
    label = clean_label(value, field, max_length=max_length)
    if shows_nothing(label):
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    return label


def entity_form(name: str) -> str:
    """An entity's name or alias as it is recorded, and as one is found to take it back: without
    the characters that show nothing (`visible`), trimmed (of the Braille blank too), otherwise
    as written: "Redis\u200d" sighted is "Redis", not an alias of it."""
    return trimmed(visible(name))


def clean_entity_name(value: object, field: str) -> str:
    """An entity's name or alias as it is recorded (`entity_form`: without the characters that
    show nothing, `visible`; a name holding U+202E showed reversed in the console), checked
    (`clean_label`) and not one that shows nothing."""
    name = entity_form(clean_label(value, field, max_length=NAME_MAX_LENGTH))
    if shows_nothing(name):
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    return name


UNSCOPABLE_WING = "wing must not be '*' nor contain ',' (an agent key's wings are written so)."


def unscopable(wing: str) -> bool:
    """A wing no agent key can be made for: `*` is every wing to a key, `,` separates its wings."""
    return wing == "*" or "," in wing


DOT_SEGMENTS = (".", "..")


def clean_place_name(value: object, field: str, *, restored: bool = False) -> str:
    """The name a new wing or room is given (`clean_label`, then `label_form`), which the API's
    paths and a key's wings must be able to name: no `/` (a path's separator), not `.` nor `..`
    (a path's dot segments), and a wing
    neither `*` (every wing, to a key) nor holding `,` (between a key's wings). `restored` (an
    import's record, its store's names kept) allows the `/` a path cannot name, never what a
    key cannot. Names made before stay reachable as they are."""
    label = label_form(clean_label(value, field))
    if shows_nothing(label):  # only fillers or selectors, which `clean_label` takes for letters
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    if "/" in label and not restored:
        raise InvalidInput(f"{field} must not contain '/'.", details={"field": field})
    if label in DOT_SEGMENTS and not restored:
        raise InvalidInput(
            f"{field} must not be '.' or '..': a browser reads either in a path as a folder, "
            "so no link could name it.",
            details={"field": field},
        )
    if field == "wing" and unscopable(label):
        raise InvalidInput(UNSCOPABLE_WING, details={"field": field})
    return label


def clean_optional_label(value: object, field: str, *, max_length: int) -> str:
    """An optional name something is given (`clean_name`): None or "" is none."""
    if value is None or value == "":
        return ""
    return clean_name(value, field, max_length=max_length)


def optional_written_name(value: object, field: str, *, max_length: int) -> str:
    """A drawer's name or the agent a write is made as (`clean_optional_label`: None or "" is
    none), in the form a new wing is given (`written_name`): "scout\u200d" is the agent "scout",
    "notes\ufe0f" the drawer named "notes", not a second one beside it that looks the same.

    Given that form, not refused: an agent is who a memory is from, not who may write it (a key
    writes as its own agent, whose name, a username, holds no joiner nor selector; writing as
    another needs `write_as_any_agent`), so folding a look-alike into the agent it looks like
    widens no one's reach, where a 400 would stop an import or a client whose agent was written
    with a stray joiner. Rows stored before keep their agent and name as written: a named write
    still finds a drawer stored under its name before (`earlier_drawer`)."""
    if value is None or value == "":
        return ""
    return written_name(value, field, max_length=max_length)


def written_name(value: object, field: str, *, max_length: int) -> str:
    """A name something new is given (`clean_name`: not one that shows nothing) in the form a
    new wing is given (`label_form`): a drawer's, an agent's, a checkpoint's id. A name past
    `max_length` once composed is refused (U+0958 composes to two characters), not stored."""
    form = label_form(clean_name(value, field, max_length=max_length))
    if len(form) > max_length:
        raise InvalidInput(
            f"{field} must be at most {max_length} characters.", details={"field": field}
        )
    return form


def optional_place_name(value: object, field: str) -> str:
    """An optional wing or room a request names (`place_name`): None or "" is none."""
    if value is None or value == "":
        return ""
    return place_name(value, field)


def clean_kind(value: object, field: str = "kind", *, default: str = "") -> str:
    """A kind: a short lowercase word. Absent (None or "") is the default; given but blank is
    `empty_label`, as a blank name is; anything else that is not such a word is `invalid`."""
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string.", details={"field": field})
    kind = value.strip().lower()
    if shows_nothing(kind):
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    if not KIND_PATTERN.match(kind):
        raise InvalidInput(
            f"{field} must be a short lowercase word: a to z, then a to z, 0 to 9, - and _ "
            "(at most 32).",
            details={"field": field},
        )
    return kind


# --- ids, cursors and documents from outside --------------------------------------------------

ID_MAX = 2**63 - 1  # the largest id a database column holds: 19 digits
MAX_DEPTH = 32  # how deep a JSON document from outside may nest
# NUL, and the UTF-16 surrogate halves a JSON `\ud800` escape can smuggle into a Python str:
# PostgreSQL stores neither, and no field needs them.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
UNSTORABLE_MESSAGE = "Must not contain NUL characters or lone surrogates."
CURSOR_MAX_CHARACTERS = 512  # a cursor the app made (sealed: dedup.cursors) is under 200


def clean_username(value: str, field: str = "username") -> str:
    """A user's name (a curator's, an agent's) as the user model's field accepts it: its length
    and its characters (letters, digits and @.+-_), where a command saved whatever it was given
    (and PostgreSQL refused one past its column with an error); not one that shows nothing; and
    in the form Django's own forms store and sign in with (`normalize_username`, NFKC: a
    fullwidth "\uff51uinn" is "quinn", whom the login page could not find under the name as
    typed), unless a login holds the name exactly as typed (made before that rule)."""
    User = get_user_model()
    try:
        name = User._meta.get_field("username").clean(value, None)
        if not User.objects.filter(username=name).exists():  # checked as it will be stored
            name = User._meta.get_field("username").clean(User.normalize_username(name), None)
    except ValidationError as error:
        raise InvalidInput(
            f"{field}: {' '.join(error.messages)}", details={"field": field}
        ) from None
    if shows_nothing(name):  # a Hangul filler is a letter to the user model: an agent unseen
        raise EmptyLabel(f"{field} must not be blank.", details={"field": field})
    return name


def unstorable(text: str) -> bool:
    return UNSTORABLE.search(text) is not None


def id_of(raw: str) -> int | None:
    """The id a text writes: ASCII digits only (`str.isdigit` also accepts "²"), at most
    ID_MAX, judged on the text before `int` reads it (Python refuses more than 4,300 digits);
    otherwise None."""
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19 or int(raw) > ID_MAX:
        return None
    return int(raw)


def document_problem(document: Any) -> tuple[str, str] | None:
    """Where a decoded JSON document nests deeper than MAX_DEPTH or holds an unstorable string
    (a key or a value), and which ("deep" or "unstorable"); None if neither. Iterative, so the
    check itself cannot recurse too deeply; only containers are stacked, each with its way back
    to the root, so a path is spelled only for the problem found (spelling one for every value
    had cost a body of a million values a second)."""
    pending: list[tuple[Any, Way, int]] = [(document, None, 0)]
    while pending:
        value, way, depth = pending.pop()
        if depth >= MAX_DEPTH and value:  # what it holds is deeper than MAX_DEPTH
            return spelled(way), "deep"
        if isinstance(value, dict):
            items: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            if isinstance(value, str) and unstorable(value):
                return spelled(way), "unstorable"
            continue
        for key, item in items:
            if isinstance(key, str) and unstorable(key):
                return spelled(way), "unstorable"
            if isinstance(item, str):
                if unstorable(item):
                    return spelled((way, key)), "unstorable"
            elif isinstance(item, (dict, list)):
                pending.append((item, (way, key), depth + 1))
    return None


# The keys and indexes from a document's root to a value, innermost last: (way, key) pairs.
Way = tuple["Way", Any] | None


def spelled(way: Way) -> str:
    """A way as a path: `items[0].wing`."""
    keys: list[Any] = []
    while way is not None:
        way, key = way
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path += f"[{key}]" if isinstance(key, int) else f".{key}" if path else str(key)
    return path


def cursor_of(values: list[Any]) -> str:
    """A page's cursor: its values as a JSON array, base64url without padding."""
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def cursor_values(cursor: str, count: int) -> list[Any]:
    """The `count` values a cursor (`cursor_of`) holds, or InvalidInput `invalid_cursor` for one
    the app did not make: too long, not base64 or JSON, NaN or Infinity, or not such an array."""
    try:
        if len(cursor) > CURSOR_MAX_CHARACTERS:
            raise ValueError(cursor)
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw, parse_constant=_no_constant)
        if not isinstance(values, list) or len(values) != count:
            raise ValueError(cursor)
        return values
    except (ValueError, binascii.Error, RecursionError):  # JSON's and Unicode's are ValueErrors
        raise malformed_cursor() from None


def cursor_id(value: Any) -> int:
    """A cursor's value that must be an id (a JSON integer from 1 to ID_MAX)."""
    if type(value) is not int or not 0 < value <= ID_MAX:
        raise malformed_cursor()
    return value


def cursor_number(value: Any) -> float:
    """A cursor's value that must be a finite number."""
    try:
        number = float(value) if type(value) in (int, float) else math.nan
    except OverflowError:  # an integer beyond any float
        number = math.nan
    if not math.isfinite(number):
        raise malformed_cursor()
    return number


def cursor_time(value: Any) -> datetime:
    """A cursor's value that must be an instant (ISO 8601 with its offset), in UTC: any offset
    ISO allows reads, where PostgreSQL refuses one beyond 15:59 and SQLite's conversion of the
    last hours of year 9999 overflows."""
    try:
        instant = datetime.fromisoformat(value)
        if instant.tzinfo is None:
            raise ValueError(value)
        return instant.astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        raise malformed_cursor() from None


def _no_constant(name: str) -> None:
    raise ValueError(name)


def malformed_cursor() -> InvalidInput:
    return InvalidInput("Malformed cursor.", code="invalid_cursor", details={"field": "cursor"})
