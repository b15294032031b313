"""The full-text index over drawers' normalised text, for lexical duplicate candidates.

Its terms are the words of a drawer's indexed text (`indexed_column`): the normalised text, or,
for a text in a script written without spaces (Chinese, Japanese, Thai...), its `index_text`,
whose long runs are cut into pieces and which ends with each run's pairs of neighbouring
characters, for search (`dedup.policy.index_text`), set by the write path.

SQLite: a contentless FTS5 table kept in step by triggers, one term per word and room (below), so
a lookup in a room reads that room's postings only; accents kept, as in the policy.
PostgreSQL: a GIN index on the same terms, built by the function `castellan_drawer_terms` from
the drawer's room and indexed text (`array_to_tsvector`: the words as they are, no parser, no
dictionary), so a lookup's lexemes are its room's and its posting lists hold only that room's
drawers. A room of 1,000 among 1,000,000 drawers: a word pair's lookup read 7 to 11 buffers in
0.07 to 0.2 ms, against 12 to 46 buffers and 0.25 to 1.9 ms when the index keyed the room beside
the words (`btree_gin`) and each word's posting list spanned the store. It covers every drawer
(not only current ones: a partial index would let the planner pick other partial indexes for the
lookup, see `dedup.candidates.drawers.POSTGRESQL_FUNCTION`); only this index serves the
expression, so it is a lookup's only plan whatever the statistics. fastupdate is off: with it on,
every search also reads the unsorted pending list, which on a write-heavy table costs
milliseconds.

This module is the live definition: the query code uses its expressions, and
tests/dedup/test_migrations.py checks that what the migrations installed is what it defines.
Migrations never import it: each holds its own copy of the SQL it ran, so changing this module
never changes what an old migration did. A change here needs a new migration; so does a migration
that makes Django rebuild `palace_drawer` on SQLite (adding a column with a default does), since
the rebuild drops the triggers with the old table: it must end by creating them again (copy
`SQLITE` into it, as palace's migration 0003 does). `install` is idempotent.
"""

# A term is a word of one room: the word, ROOM_MARK, the room's id. The mark is never in a
# normalised text (not a letter or a digit), so a term names one word and one room, and the terms
# of a word in any room are those starting with the word and the mark.
ROOM_MARK = "\u00b7"

# PostgreSQL: the document of a drawer, its terms as a tsvector. A query uses the GIN index only
# when it matches with this very expression, so the index and every query build it here. The
# first POSTGRESQL_MAX_CHARACTERS of a text are indexed, and of those the words of at most
# POSTGRESQL_MAX_WORD_BYTES (a lexeme holds at most 2,047 bytes; `policy.QUERY_WORD_MAX_CHARS`
# keeps every query word under it).
POSTGRESQL_FUNCTION_NAME = "castellan_drawer_terms"
POSTGRESQL_MAX_CHARACTERS = 100000
POSTGRESQL_MAX_WORD_BYTES = 2000


def indexed_words(indexed: str, vendor: str) -> list[str]:
    """The words of a drawer's indexed text (`indexed_column`: its index text, else its
    normalised text) that the index holds as its terms (each followed by the room mark and the
    room): on SQLite every word (`str.split`'s, see SQLITE_TOKENIZE); on PostgreSQL those
    `castellan_drawer_terms` keeps, the words of the first POSTGRESQL_MAX_CHARACTERS of at most
    POSTGRESQL_MAX_WORD_BYTES."""
    if vendor == "postgresql":
        text = indexed[:POSTGRESQL_MAX_CHARACTERS].rstrip(" ")
        words = text.split(" ") if text else []
        return [word for word in words if len(word.encode()) <= POSTGRESQL_MAX_WORD_BYTES]
    return indexed.split(" ") if indexed else []


def indexed_column(alias: str = "") -> str:
    """The SQL expression of the text whose words are a drawer's terms: its `index_text` where
    it has one (a text in a script written without spaces, `dedup.policy.index_text`), else its
    normalised text. `alias`: the name a query gives `palace_drawer` (or a trigger's `new`)."""
    prefix = f"{alias}." if alias else ""
    return f"coalesce({prefix}index_text, {prefix}normalized_content)"


def postgresql_document(alias: str = "") -> str:
    """The tsvector expression the GIN index is built on, over the columns of `palace_drawer`
    as the query names it (`alias`, or none)."""
    prefix = f"{alias}." if alias else ""
    return f"{POSTGRESQL_FUNCTION_NAME}({prefix}room_id, {indexed_column(alias)})"


def postgresql_query(text: str) -> str:
    """The tsquery expression of `text` (an SQL expression: a parameter or a variable holding
    `postgresql_match`'s text)."""
    return f"({text})::tsquery"


def postgresql_match(words: list[str], room: int | None = None) -> str:
    """The tsquery text of drawers holding every word, in `room` if given (each word's term in
    the room), else in any room (each word's terms by prefix). Words are letters and digits only;
    quoting keeps any from being read as an operator."""
    if room is None:
        return " & ".join(f"'{word}{ROOM_MARK}':*" for word in words)
    return " & ".join(f"'{word}{ROOM_MARK}{int(room)}'" for word in words)


# SQLite: the terms in an FTS5 table, so a candidate lookup reads only its room's postings of
# each word, exactly as if every room had an index of its own (a room of 1,000 among 1,000,000
# drawers: 0.4 ms for five word pairs, against 7.8 ms when the room was a column matched beside
# the words, whose postings span the whole table). A search across rooms asks each word's terms
# by prefix ("word·*").
# The `ascii` tokenizer splits only at ASCII characters other than letters and digits, and a
# normalised text holds none but its single spaces: the terms are `str.split`'s words exactly,
# whatever the script (unicode61 split words at vowel signs and other marks, which made a Hindi
# word a phrase FTS5 refuses without positions). Contentless (content=''): lookups read only
# rowids, the triggers hand it the old terms to delete; no phrase positions (detail=none) and no
# document sizes (columnsize=0: nothing ranks by bm25).
SQLITE_TOKENIZE = "ascii"
SQLITE_DETAIL = "none"


def sqlite_terms(alias: str = "") -> str:
    """The SQL expression of a drawer's terms, from the columns of `palace_drawer` as `alias`
    names it (a trigger's `new` or `old`, or none): each word of its indexed text
    (`indexed_column`) followed by the room mark and the room's id (none for an empty text)."""
    prefix = f"{alias}." if alias else ""
    mark = f"'{ROOM_MARK}' || {prefix}room_id"
    text = indexed_column(alias)
    return f"CASE WHEN {text} = '' THEN '' ELSE replace({text}, ' ', {mark} || ' ') || {mark} END"


def sqlite_match(words: list[str], room: int | None = None) -> str:
    """The FTS5 query of drawers holding every word, in `room` if given (each word's term in the
    room), else in any room (each word's terms by prefix). Quoting keeps FTS5 from reading a
    word as an operator such as AND or NEAR."""
    if room is None:
        return " AND ".join(f'"{word}{ROOM_MARK}" *' for word in words)
    return " AND ".join(f'"{word}{ROOM_MARK}{int(room)}"' for word in words)


_NEW_TERMS = sqlite_terms("new")
_OLD_TERMS = sqlite_terms("old")
SQLITE = [
    f"""
    CREATE VIRTUAL TABLE IF NOT EXISTS palace_drawer_fts USING fts5(
        terms,
        content='',
        columnsize=0,
        tokenize='{SQLITE_TOKENIZE}',
        detail={SQLITE_DETAIL}
    )
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_insert AFTER INSERT ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {_NEW_TERMS});
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_delete AFTER DELETE ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
        VALUES ('delete', old.id, {_OLD_TERMS});
    END
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS palace_drawer_fts_update
    AFTER UPDATE OF room_id, normalized_content, index_text ON palace_drawer BEGIN
        INSERT INTO palace_drawer_fts(palace_drawer_fts, rowid, terms)
        VALUES ('delete', old.id, {_OLD_TERMS});
        INSERT INTO palace_drawer_fts(rowid, terms) VALUES (new.id, {_NEW_TERMS});
    END
    """,
    # Filled from the table (a contentless table has no 'rebuild').
    f"INSERT INTO palace_drawer_fts(rowid, terms) SELECT id, {sqlite_terms()} FROM palace_drawer",
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS palace_drawer_fts_update",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_delete",
    "DROP TRIGGER IF EXISTS palace_drawer_fts_insert",
    "DROP TABLE IF EXISTS palace_drawer_fts",
]
# The document: every word of the text's first POSTGRESQL_MAX_CHARACTERS (rtrim: a cut may end
# at a space) of at most POSTGRESQL_MAX_WORD_BYTES, as a term of the room. A text that short can
# hold no longer word, so it skips the loop (most do).
POSTGRESQL_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {POSTGRESQL_FUNCTION_NAME}(p_room bigint, p_text text)
RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    v_text text := rtrim(left(p_text, {POSTGRESQL_MAX_CHARACTERS}), ' ');
    v_mark text := '{ROOM_MARK}' || p_room;
    v_terms text[] := '{{}}';
    v_word text;
BEGIN
    IF v_text = '' THEN
        RETURN ''::tsvector;
    END IF;
    IF octet_length(v_text) <= {POSTGRESQL_MAX_WORD_BYTES} THEN
        RETURN array_to_tsvector(
            string_to_array(replace(v_text, ' ', v_mark || ' ') || v_mark, ' '));
    END IF;
    FOREACH v_word IN ARRAY string_to_array(v_text, ' ') LOOP
        IF octet_length(v_word) <= {POSTGRESQL_MAX_WORD_BYTES} THEN
            v_terms := v_terms || (v_word || v_mark);
        END IF;
    END LOOP;
    RETURN array_to_tsvector(v_terms);
END
$$
"""
POSTGRESQL = [
    POSTGRESQL_FUNCTION,
    f"""
    CREATE INDEX IF NOT EXISTS palace_drawer_fulltext ON palace_drawer USING gin (
        {postgresql_document()}
    ) WITH (fastupdate = off)
    """,
]
POSTGRESQL_REMOVE = [
    "DROP INDEX IF EXISTS palace_drawer_fulltext",
    f"DROP FUNCTION IF EXISTS {POSTGRESQL_FUNCTION_NAME}(bigint, text)",
]
SQLITE_TRIGGERS = {
    "palace_drawer_fts_insert",
    "palace_drawer_fts_delete",
    "palace_drawer_fts_update",
}


def _run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


install = _run({"sqlite": SQLITE, "postgresql": POSTGRESQL})
remove = _run({"sqlite": SQLITE_REMOVE, "postgresql": POSTGRESQL_REMOVE})
