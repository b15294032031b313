import itertools

import pytest

from dedup.policy import EntityCandidate, Rule, entity_key, resolve
from tests.conformance.loader import expectations, holds, params


@pytest.mark.parametrize("case", params("entity_key"))
def test_entity_key_conformance(case):
    given = case["input"]
    expect = expectations(case, {"key"} if "name" in given else {"equal"})
    if "name" in given:
        assert entity_key(given["name"]) == expect["key"]
    else:
        assert (entity_key(given["a"]) == entity_key(given["b"])) is expect["equal"]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        pytest.param("Node.js", "nodejs", id="dot-joins"),
        pytest.param("O\u2019Brien", "obrien", id="typographic-apostrophe-joins"),
        pytest.param("C++", "c++", id="plus-kept"),
        pytest.param("F#", "f#", id="hash-kept"),
        pytest.param("  Ada   LOVELACE ", "ada lovelace", id="casefold-trim-collapse"),
        pytest.param("Jean_Luc/Picard", "jean luc picard", id="other-runs-one-space"),
        pytest.param("Café", "café", id="accents-kept"),
        pytest.param("Straße", "strasse", id="casefold"),
        pytest.param(" ??? ", "???", id="nothing-left-keys-as-itself"),
        pytest.param("ＡＷＳ", "aws", id="full-width-letters-usual-width"),
        pytest.param("Ｃ＃", "c#", id="full-width-hash-kept"),
        pytest.param("ﾄﾞｯｶｰ", "ドッカー", id="half-width-katakana-usual-width"),
    ],
)
def test_entity_key_rules(name, key):
    assert entity_key(name) == key


def candidates_of(case) -> tuple[list[EntityCandidate], dict]:
    """Conformance candidates are listed in creation order: position is age."""
    refs = {}
    built = []
    for age, c in enumerate(case["input"]["candidates"]):
        built.append(EntityCandidate(c["id"], c["name"], c["kind"], tuple(c["aliases"]), age=age))
        refs[c["id"]] = c["ref"]
    return built, refs


@pytest.mark.parametrize("case", params("resolve"))
def test_resolve_conformance(case):
    given = case["input"]
    expect = expectations(
        case,
        {
            "same",
            "rule",
            "confidence",
            "distinct",
            "possible",
            "possible_contains",
            "possible_ordered",
            "possible_count",
            "order_independent",
        },
    )
    candidates, refs = candidates_of(case)
    result = resolve(given["name"], given["kind"], candidates, given["fuzzy"])
    if "same" in expect:
        assert refs[result.entity] == expect["same"]
        assert result.rule == expect["rule"]
        if "confidence" in expect:
            assert holds(result.confidence, expect["confidence"])
    if expect.get("distinct"):
        assert result.entity is None
        possible = [refs[p.entity] for p in result.possible]
        if "possible" in expect:
            assert sorted(possible) == sorted(expect["possible"])
        if "possible_contains" in expect:
            assert set(expect["possible_contains"]) <= set(possible)
        if "possible_ordered" in expect:
            assert possible == expect["possible_ordered"]
        if "possible_count" in expect:
            assert len(possible) == expect["possible_count"]
    if expect.get("order_independent"):
        reversed_result = resolve(given["name"], given["kind"], candidates[::-1], given["fuzzy"])
        assert reversed_result == result


def person(id_, name, age=None, aliases=(), kind="person"):
    return EntityCandidate(id_, name, kind, aliases, age=id_ if age is None else age)


@pytest.mark.parametrize(
    ("name", "known", "entity", "rule", "confidence"),
    [
        pytest.param("Ada", [person(1, "Ada")], 1, Rule.EXACT, 1.0, id="exact"),
        pytest.param("ada", [person(1, "Ada")], 1, Rule.NORMALIZED, 0.98, id="key"),
        pytest.param(
            "Lady Ada",
            [person(1, "Ada", aliases=("lady ada",))],
            1,
            Rule.ALIAS,
            0.95,
            id="alias-by-key",
        ),
        pytest.param(
            "Lovelase",
            [person(1, "Lovelace")],
            1,
            Rule.TYPO,
            7 / 8,
            id="typo-confidence-is-similarity",
        ),
        # Six characters on both sides is the floor for the typo rule.
        pytest.param(
            "Kathie",
            [person(1, "Kathy")],
            None,
            Rule.DISTINCT,
            0.0,
            id="typo-five-char-key-refused",
        ),
        pytest.param(
            "Martha", [person(1, "Marthe")], 1, Rule.TYPO, 5 / 6, id="typo-six-char-keys-accepted"
        ),
        pytest.param(
            "Marta",
            [person(1, "Martha")],
            None,
            Rule.DISTINCT,
            0.0,
            id="typo-one-side-five-refused",
        ),
    ],
)
def test_resolution_rules(name, known, entity, rule, confidence):
    result = resolve(name, "person", known, True)
    assert (result.entity, result.rule) == (entity, rule)
    assert result.confidence == pytest.approx(confidence)


def test_rule_order_exact_then_key_then_alias_then_typo():
    known = [
        person(1, "Grace Hoppers"),  # one edit: typo
        person(2, "Admiral", aliases=("grace hopper",)),  # alias
        person(3, "GRACE HOPPER"),  # same key
        person(4, "Grace Hopper"),  # exact
    ]
    assert resolve("Grace Hopper", "person", known, True).entity == 4
    assert resolve("Grace Hopper", "person", known[:3], True).entity == 3
    assert resolve("Grace Hopper", "person", known[:2], True).entity == 2
    assert resolve("Grace Hopper", "person", known[:1], True).rule == Rule.TYPO


def test_ties_go_to_the_oldest_whatever_the_order_or_ids():
    # Ids sort the other way round on purpose: age decides, not the id's string form.
    older = EntityCandidate("zzz", "Ada", "person", age=1)
    newer = EntityCandidate("aaa", "ADA", "person", age=2)
    newest = EntityCandidate("mmm", "ada", "person", age=3)
    for order in itertools.permutations([older, newer, newest]):
        assert resolve("aDa", "person", order, True).entity == "zzz"


def test_ambiguous_typo_stays_distinct_and_names_both():
    known = [person(1, "Johnson"), person(2, "Johnsen")]
    result = resolve("Johnsin", "person", known, True)
    assert result.entity is None
    assert {p.entity for p in result.possible} == {1, 2}


def test_possible_matches_two_edits_four_chars_and_similarity_floor():
    known = [
        person(1, "Katarina"),  # 1 edit from Katerino? no: 2 edits, 8 chars, 0.75: kept
        person(2, "Kat"),  # key under 4 characters: never possible
        person(3, "Katerina"),  # 1 edit
        person(4, "Kaxxrino"),  # 2 edits but similarity 0.75: kept
        person(5, "Kxxxrino"),  # 3 edits: not possible
    ]
    result = resolve("Katerino", "person", known, True)
    assert result.entity == 3
    assert result.rule == Rule.TYPO
    distinct = resolve("Katerino", "person", [known[0], known[1], known[3], known[4]], True)
    assert [p.entity for p in distinct.possible] == [1, 4]
    assert all(p.similarity >= 0.75 for p in distinct.possible)


def test_possible_similarity_floor_is_inclusive():
    # 4 characters, 1 edit: similarity exactly 0.75.
    result = resolve("Mara", "person", [person(1, "Mira")], True)
    assert [(p.entity, p.similarity) for p in result.possible] == [(1, 0.75)]
    # 5 characters, 2 edits: 0.6, below the floor.
    assert resolve("Maria", "person", [person(1, "Moxia")], True).possible == ()


def test_at_most_five_possible_closest_first_then_oldest():
    known = [person(i, f"Katerin{c}") for i, c in enumerate("bcdefgh", start=1)]
    known.append(person(99, "Katerxya", age=0))  # two edits: further away, even though oldest
    result = resolve("Katerina", "person", known, True)
    assert result.entity is None  # seven entities one edit away: ambiguous
    assert [p.entity for p in result.possible] == [1, 2, 3, 4, 5]


def test_kinds_specific_only_matches_own_and_other_matches_any_preferring_specific():
    known = [
        EntityCandidate(1, "Mercury", "other", age=1),
        EntityCandidate(2, "Mercury", "planet", age=2),
    ]
    assert resolve("Mercury", "element", known, True).entity is None
    assert resolve("Mercury", "planet", known, True).entity == 2
    # A vague sighting prefers the specific kind even though the vague entity is older.
    assert resolve("mercury", "other", known, True).entity == 2
    assert resolve("Mercury", "other", known[:1], True).entity == 1


def test_fuzzy_off_keeps_rules_one_to_three_only():
    known = [person(1, "SurrealDB", kind="tool", aliases=("surreal",))]
    assert resolve("surrealdb", "tool", known, False).rule == Rule.NORMALIZED
    assert resolve("Surreal", "tool", known, False).rule == Rule.ALIAS
    result = resolve("SurealDB", "tool", known, False)
    assert result.entity is None
    assert result.possible == ()


def test_aliases_are_not_used_for_typos():
    # An alias may itself have been a typo; chaining typos through aliases would drift.
    known = [person(1, "Lovelace", aliases=("Lovelase",))]
    assert resolve("Lovelaze", "person", known, True).rule == Rule.TYPO  # via the name
    assert resolve("Lovelasz", "person", known, True).entity is None


def test_distinct_from_is_never_proposed_or_converged():
    known = [person(1, "Lovelace")]
    result = resolve("Lovelase", "person", known, True, distinct_from=frozenset({1}))
    assert result.entity is None
    assert result.possible == ()


# Issue 10, item 20: an alias a person recorded serves the typo rule as the canonical name does;
# an alias recorded by an earlier convergence never does (spellings would drift one edit at a
# time). The caller says which aliases a person recorded: `typo_aliases`.


def vouched(id_, name, typo_aliases, aliases=()):
    """An entity with aliases a person recorded (they are also ordinary aliases)."""
    return EntityCandidate(
        id_,
        name,
        "person",
        (*aliases, *typo_aliases),
        age=id_,
        typo_aliases=tuple(typo_aliases),
    )


def test_the_order_of_an_entity_s_person_aliases_never_changes_the_resolution():
    """Person aliases as close to the name, one too short for the typo rule: a longer one
    serves it, whichever comes first (the database returns them in any order)."""
    for aliases in itertools.permutations(["abcdex", "abcde", "abcdey"]):
        result = resolve("abcdef", "person", [vouched(1, "Zed", aliases)], True)
        assert (result.entity, result.rule) == (1, Rule.TYPO), aliases
    # Likewise for a possible match: the alias of three characters is too short to propose.
    for aliases in itertools.permutations(["abc", "abcx"]):
        result = resolve("abcd", "person", [vouched(1, "Zed", aliases)], True)
        assert [(p.entity, p.similarity) for p in result.possible] == [(1, 0.75)], aliases


@pytest.mark.parametrize(
    ("name", "known", "entity", "rule", "confidence"),
    [
        pytest.param(
            "Lovelase",
            [vouched(1, "Ada", ["Lovelace"])],
            1,
            Rule.TYPO,
            7 / 8,
            id="one-edit-of-a-person-alias",
        ),
        pytest.param(
            "Lovelase",
            [person(1, "Ada", aliases=("Lovelace",))],
            None,
            Rule.DISTINCT,
            0.0,
            id="one-edit-of-an-automatic-alias-refused",
        ),
        pytest.param(
            "Martha",
            [vouched(1, "Ada", ["Marthe"])],
            1,
            Rule.TYPO,
            5 / 6,
            id="six-char-person-alias-accepted",
        ),
        pytest.param(
            "Marta",
            [vouched(1, "Ada", ["Marte"])],
            None,
            Rule.DISTINCT,
            0.0,
            id="five-char-person-alias-refused",
        ),
        pytest.param(
            "Marta",
            [vouched(1, "Ada", ["Martha"])],
            None,
            Rule.DISTINCT,
            0.0,
            id="five-char-sighting-of-six-char-alias-refused",
        ),
        pytest.param(
            "Lovlase",
            [vouched(1, "Ada", ["Lovelace"])],
            None,
            Rule.DISTINCT,
            0.0,
            id="two-edits-of-a-person-alias-refused",
        ),
        pytest.param(
            "Lovelace",
            [vouched(1, "Ada", ["Lovelace"])],
            1,
            Rule.ALIAS,
            0.95,
            id="the-person-alias-itself-is-alias",
        ),
    ],
)
def test_typo_of_a_person_alias(name, known, entity, rule, confidence):
    result = resolve(name, "person", known, True)
    assert (result.entity, result.rule) == (entity, rule)
    assert result.confidence == pytest.approx(confidence)


def test_typo_of_a_person_alias_needs_fuzzy():
    result = resolve("Lovelase", "person", [vouched(1, "Ada", ["Lovelace"])], False)
    assert result.entity is None


def test_typo_of_person_aliases_of_two_entities_converges_on_neither():
    known = [vouched(1, "Ada", ["Johnson"]), vouched(2, "Grace", ["Johnsen"])]
    result = resolve("Johnsin", "person", known, True)
    assert result.entity is None
    assert result.rule == Rule.DISTINCT
    assert {p.entity for p in result.possible} == {1, 2}


def test_typo_of_a_person_alias_and_of_another_name_converges_on_neither():
    known = [vouched(1, "Ada", ["Johnson"]), person(2, "Johnsen")]
    assert resolve("Johnsin", "person", known, True).entity is None


def test_one_entity_close_by_name_and_by_person_alias_is_one_match():
    # Two keys of the same entity one edit away are not an ambiguity.
    known = [vouched(1, "Johnson", ["Johnsen"])]
    result = resolve("Johnsin", "person", known, True)
    assert (result.entity, result.rule) == (1, Rule.TYPO)


def test_marks_tell_keys_apart():
    from dedup.policy import entity_key

    assert entity_key("ป่า") != entity_key("ป้า")
    assert entity_key("क्षत्रिय") == "क्षत्रिय"


def test_a_full_width_name_converges_on_its_usual_width_by_key():
    """An input method's "ＰｏｓｔｇｒｅＳＱＬ" is the PostgreSQL already known: the same key."""
    result = resolve(
        "ＰｏｓｔｇｒｅＳＱＬ", "tool", [EntityCandidate(1, "PostgreSQL", "tool")], True
    )
    assert (result.entity, result.rule) == (1, Rule.NORMALIZED)


@pytest.mark.parametrize(
    ("known", "sighted"),
    [
        pytest.param("Server 1", "Server 2", id="a-digit-changed"),
        pytest.param("db-prod-01", "db-prod-02", id="a-host-number"),
        pytest.param("Python 3.11", "Python 3.12", id="a-version"),
        pytest.param("Python 3.12", "Python 31.2", id="same-key-dots-dropped"),
        pytest.param("Release 2024", "Release 20245", id="a-digit-added"),
    ],
)
def test_a_name_differing_in_a_number_never_converges_and_is_proposed(known, sighted):
    """A wrong merge is worse than a missed one: one edit in a number makes another server,
    host or version, so the typo (or key) rule converges on nothing; a person judges the
    possible match."""
    resolution = resolve(sighted, "tool", [EntityCandidate(1, known, "tool")], True)
    assert resolution.entity is None
    assert [match.entity for match in resolution.possible] == [1]


def test_a_person_alias_differing_in_a_number_is_not_reached_either():
    known = EntityCandidate(1, "Castle", "tool", ("Server 1",), typo_aliases=("Server 1",))
    assert resolve("Server 2", "tool", [known], True).entity is None
    assert resolve("server-1", "tool", [known], True).entity == 1


def test_a_typo_beside_the_same_numbers_still_converges():
    resolution = resolve("Servr 01", "tool", [EntityCandidate(1, "Server 01", "tool")], True)
    assert (resolution.entity, resolution.rule) == (1, Rule.TYPO)


def test_a_number_changed_does_not_make_a_real_typo_ambiguous():
    known = [EntityCandidate(1, "Server 1", "tool"), EntityCandidate(2, "Servor 2", "tool")]
    assert resolve("Server 2", "tool", known, True).entity == 2


@pytest.mark.parametrize(
    ("known", "sighted", "rule"),
    [
        pytest.param("1-800-Flowers", "1 800 Flowers", Rule.NORMALIZED, id="separators"),
        pytest.param("Boeing 747-400", "Boeing 747 400", Rule.NORMALIZED, id="hyphen-space"),
        pytest.param("db-prod-01", "db-prod-1", Rule.TYPO, id="leading-zero"),
        pytest.param("Server \uff12", "Server 2", Rule.NORMALIZED, id="full-width-digit"),
    ],
)
def test_names_whose_numbers_are_the_same_by_value_still_converge(known, sighted, rule):
    """A fresh-eyes review: comparing numbers as written (separators, leading zeros) had lost
    these, which converged before the numbers rule."""
    resolution = resolve(sighted, "tool", [EntityCandidate(1, known, "tool")], True)
    assert (resolution.entity, resolution.rule) == (1, rule)
