import unicodedata

import pytest

from dedup.policy import numerals
from dedup.policy.merge_gates import differing_numbers, text_differences
from dedup.policy.word_flags import WordFlag, differing_words, word_kinds
from review import diff, sequences
from review.diff import Segment, compact, side_by_side
from review.templatetags.queue_rows import compact_diff


def test_typo_shows_as_letters_not_a_whole_word():
    left, right = side_by_side("use the storage engine", "use the storge engine")
    assert Segment("delete", "a") in left
    assert [s.op for s in right] == ["equal", "equal"] or "insert" not in [s.op for s in right]
    assert "".join(s.text for s in left) == "use the storage engine"
    assert "".join(s.text for s in right) == "use the storge engine"


def test_inserted_and_deleted_words():
    left, right = side_by_side("backups run nightly", "backups run every night nightly")
    assert [s for s in right if s.op == "insert"] == [Segment("insert", "every night ")]
    assert not [s for s in left if s.op == "delete"]


def test_changed_digit_is_marked():
    _, right = side_by_side("use port 8080", "use port 8081")
    changed = [s for s in right if s.op == "insert"]
    assert changed == [Segment("insert", "1")]
    assert changed[0].has_digit


def test_numbers_and_dates_that_differ_are_reported():
    assert differing_numbers("use port 8080", "use port 8081") == (["8080"], ["8081"])
    assert differing_numbers("due 2026-03-01 at 10:30", "due 2026-03-02 at 10:30") == (
        ["2026-03-01"],
        ["2026-03-02"],
    )
    assert differing_numbers("same 42 here", "Same 42 here!") == ([], [])


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("الموعد 15 مارس", "الموعد ١٥ مارس", id="arabic-indic"),
        pytest.param("会議は15時から", "会議は１５時から", id="full-width"),
        pytest.param(
            "会議は15:30から v1.2", "会議は１５：３０から ｖ１．２", id="full-width-separators"
        ),
        pytest.param("बैठक 2026-03-01 को", "बैठक २०२६-०३-०१ को", id="devanagari-date"),
    ],
)
def test_the_same_number_in_another_script_s_digits_does_not_differ(a, b):
    assert differing_numbers(a, b) == ([], [])


def test_another_number_in_another_script_s_digits_differs_as_written():
    assert differing_numbers("الموعد 15 مارس", "الموعد ١٦ مارس") == (["15"], ["١٦"])


@pytest.mark.parametrize(
    ("a", "b", "differing"),
    [
        pytest.param("会议改到三月", "会议改到四月", (["三"], ["四"]), id="a-month"),
        pytest.param("部署四个服务器", "部署五个服务器", (["四"], ["五"]), id="a-count"),
        pytest.param(
            "预算一亿二千万", "预算一亿三千万", (["一亿二千万"], ["一亿三千万"]), id="units"
        ),
        pytest.param("三月の会議", "四月の会議", (["三"], ["四"]), id="japanese"),
        pytest.param("部署三个服务器", "部署3个服务器", ([], []), id="same-value-in-digits"),
        pytest.param("二〇二六年", "2026年", ([], []), id="a-year-digit-by-digit"),
        pytest.param("三千零五元", "3005元", ([], []), id="with-a-zero"),
        pytest.param("我们一起部署", "我们一同部署", ([], []), id="in-a-word-on-both-sides"),
        pytest.param("第三名", "第四名", (["三"], ["四"]), id="an-ordinal"),
        pytest.param("十分钟后重试", "二十分钟后重试", (["十"], ["二十"]), id="minutes"),
        pytest.param("预算千万元", "预算百万元", (["千万"], ["百万"]), id="a-word-but-yuan"),
        pytest.param("贰佰元整", "叁佰元整", (["贰佰"], ["叁佰"]), id="financial"),
        pytest.param("三つの問題", "四つの問題", (["三"], ["四"]), id="japanese-counter"),
        pytest.param("预算一万亿", "预算一亿零一万", (["一万亿"], ["一亿零一万"]), id="stacked"),
    ],
)
def test_chinese_and_japanese_numerals_are_numbers(a, b, differing):
    """Chinese and Japanese write numbers with numerals ("三月", March, against "四月"): a
    variant one numeral apart is linked near, and the curator must be warned."""
    assert differing_numbers(a, b) == differing


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("他一直在东京工作", "他始终在东京工作", id="always"),
        pytest.param("千万不要删除", "一定不要删除", id="by-all-means"),
        pytest.param("我们十分重视", "我们非常重视", id="very"),
        pytest.param("一緒に行きます", "ともに行きます", id="together"),
        pytest.param("这是唯一的办法", "这是仅有的办法", id="only"),
    ],
)
def test_a_common_word_of_numerals_reworded_is_no_number_changed(a, b):
    """The review found these warned: "一" of "一直" (always) read as one. (The words differ:
    that is warned of as a word, `text_differences`, not as a number.)"""
    assert differing_numbers(a, b) == ([], [])
    assert [flag.kind for flag in text_differences(a, b).words] == ["word"]


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        *(("十五", "15"), ("二十", "20"), ("一百零一", "101"), ("两千", "2000"), ("万", "10000")),
        *(("万亿", str(10**12)), ("一万亿", str(10**12)), ("一亿零一万", "100010000")),
        *(("一百万亿", str(10**14)), ("贰佰", "200"), ("叁佰", "300"), ("二〇二六", "2026")),
    ],
)
def test_a_numeral_s_value_counts_its_units(numeral, value):
    assert numerals.value(numeral) == value


def test_a_changed_numeral_is_marked_as_a_digit_is():
    _, right = side_by_side("会议改到三月", "会议改到四月")
    assert next(s for s in right if s.op == "insert").has_digit
    assert text_differences("会议改到三月", "会议改到四月").numbers_left == ("三",)


def test_a_reworded_word_of_numerals_is_not_marked_as_a_digit():
    _, right = side_by_side("他一直在东京工作", "他始终在东京工作")
    assert not any(s.has_digit for s in right)


# Words flagged like digits: names, weekdays, months, numbers written as words.

FLAG_CASES = [
    ("weekday", "Backups run on Tuesday.", "Backups run on Thursday.", ("Tuesday",), ("Thursday",)),
    ("month", "Renew the cert in March.", "Renew the cert in May.", ("March",), ("May",)),
    ("number word", "Keep three replicas.", "Keep four replicas.", ("three",), ("four",)),
    (
        "number word",
        "Retry twenty-one times.",
        "Retry twenty-two times.",
        ("twenty-one",),
        ("twenty-two",),
    ),
    ("name", "Ask Ada about the schema.", "Ask Alan about the schema.", ("Ada",), ("Alan",)),
    # Other languages' weekdays and months (CLDR, dedup/policy/calendar_words.py), as written in a date.
    ("month", "Встреча 15 марта в офисе.", "Встреча 15 апреля в офисе.", ("марта",), ("апреля",)),
    ("weekday", "La revue a lieu mardi.", "La revue a lieu jeudi.", ("mardi",), ("jeudi",)),
    ("month", "Der Termin ist im März.", "Der Termin ist im Juli.", ("März",), ("Juli",)),
    ("month", "الموعد في مارس القادم", "الموعد في أبريل القادم", ("مارس",), ("أبريل",)),
    ("weekday", "Toplantı salı günü.", "Toplantı perşembe günü.", ("salı",), ("perşembe",)),
    # Numbers written as words in other languages (num2words, dedup/policy/number_words.py).
    ("number word", "Wir brauchen drei Server.", "Wir brauchen vier Server.", ("drei",), ("vier",)),
    (
        "number word",
        "Necesitamos cuatro copias.",
        "Necesitamos cinco copias.",
        ("cuatro",),
        ("cinco",),
    ),
    ("number word", "Нужно три сервера.", "Нужно четыре сервера.", ("три",), ("четыре",)),
    # Inflected (num2words' cases and genders): a feminine, a genitive, "ё" written "е".
    ("number word", "Нужны две копии.", "Нужны три копии.", ("две",), ("три",)),
    ("number word", "Встреча двух команд.", "Встреча трёх команд.", ("двух",), ("трёх",)),
    ("number word", "Встреча трех команд.", "Встреча четырех команд.", ("трех",), ("четырех",)),
    ("number word", "Потрібні дві копії.", "Потрібні три копії.", ("дві",), ("три",)),
    ("number word", "Il faut trois jours.", "Il faut quatre jours.", ("trois",), ("quatre",)),
    # Weekdays written onto other words, found in the text: Chinese, Japanese, Korean.
    ("weekday", "会议改到星期三举行", "会议改到星期四举行", ("星期三",), ("星期四",)),
    ("weekday", "会議は月曜日です", "会議は火曜日です", ("月曜日",), ("火曜日",)),
    ("weekday", "월요일에 회의", "화요일에 회의", ("월요일",), ("화요일",)),
    (
        "name",
        "The deploy is owned by Katarina.",
        "The deploy is owned by Katerina.",
        ("Katarina",),
        ("Katerina",),
    ),
]


@pytest.mark.parametrize(
    ("kind", "older", "newer", "left", "right"),
    FLAG_CASES,
    ids=[f"{c[0]}: {c[3][0]}" for c in FLAG_CASES],
)
def test_differing_words_are_flagged_by_kind(kind, older, newer, left, right):
    assert differing_words(older, newer) == [WordFlag(kind, left, right)]


NOT_FLAGGED = [
    ("case only", "BACKUPS RUN ON FRIDAY WITH ADA", "Backups run on Friday with Ada"),
    (
        "sentence starts",
        "Backups run nightly. Snapshots too.",
        "Snapshots run nightly. Backups too.",
    ),
    ("a word moved", "Ada owns it on Monday", "On Monday Ada owns it"),
    ("common words", "we may march on", "we can walk on"),
    # The same names typed full-width by an input method (`policy.fold`).
    (
        "full-width",
        "会議のメモ：ＶＰＣのＣＩＤＲは10.0.0.0/16",
        "会議のメモ：VPCのCIDRは10.0.0.0/16",
    ),
    ("full-width latin", "Deploy on ＡＷＳ ＥＣ２ today", "Deploy on AWS EC2 today"),
    # Another language's short name that may be an English word: Malay's March, French's May.
    ("short names", "use the mac address", "use the ip address"),
    ("short names elsewhere", "on the mai branch", "on the dev branch"),
    ("same words", "Three of Ada's June deploys", "Three of Ada's June deploys!"),
    ("another particle", "월요일에 회의", "월요일부터 회의"),
    # A frequency is no weekday: once a week, said two ways (the review found it flagged).
    ("once a week", "每周一次备份数据库", "每星期备份一次数据库"),
    ("once a week again", "一个星期一次", "一周一回"),
    # English words that spell another language's number (ENGLISH_HOMOGRAPHS): not numbers.
    ("english homographs", "Seize the pump and the fire hose.", "Take the hose and the water."),
    ("short ones", "the bin is un-set", "the box is re-set"),
    # Inflected forms that are everyday words (INFLECTED_HOMOGRAPHS): family, a magpie.
    ("inflected homographs", "Поездка с семью на дачу.", "Поездка с друзьями на дачу."),
    ("a magpie", "На крыше сидит сорока.", "На крыше сидит ворона."),
    ("same weekday elsewhere", "星期三开会", "开会在星期三"),
]


@pytest.mark.parametrize(
    ("older", "newer"), [c[1:] for c in NOT_FLAGGED], ids=[c[0] for c in NOT_FLAGGED]
)
def test_words_present_on_both_sides_or_plain_are_not_flagged(older, newer):
    assert differing_words(older, newer) == []


def test_name_at_a_sentence_start_is_not_taken_for_a_name():
    assert word_kinds("Katarina wants reviews. Ask Ada.") == {"ada": ("name", "Ada")}


def test_side_by_side_carries_the_flag_on_the_changed_letters():
    left, right = side_by_side("Deploy on Tuesday", "Deploy on Thursday")
    assert {s.flag for s in right if s.op == "insert"} == {"weekday"}
    assert {s.flag for s in left if s.op == "delete"} == {"weekday"}


def test_side_by_side_leaves_plain_changes_unflagged():
    _, right = side_by_side("use the storage engine", "use the storge engine")
    assert {s.flag for s in right} == {""}


# The compact diff of the queue rows and the sweep cards.


def test_compact_diff_keeps_three_words_of_context_around_a_change():
    older = (
        "Our team decided in the spring that the storage engine for the new service is PostgreSQL"
    )
    newer = older.replace("PostgreSQL", "SQLite")
    assert compact(older, newer) == [
        Segment("gap", "…"),
        Segment("equal", "new service is"),
        Segment("delete", "PostgreSQL", "name"),
        Segment("insert", "SQLite", "name"),
    ]


def test_compact_diff_leaves_out_long_equal_runs_between_changes():
    older = "alpha one beta gamma delta epsilon zeta eta theta iota kappa omega"
    newer = "alpha two beta gamma delta epsilon zeta eta theta iota kappa omega!"
    ops = [s.op for s in compact(older, newer)]
    assert ops == ["equal", "delete", "insert", "equal", "gap", "equal", "delete", "insert"]


def test_compact_diff_keeps_a_short_equal_run_whole():
    segments = compact("red fox jumps high", "red cat jumps low")
    assert [s.text for s in segments] == ["red", "fox", "cat", "jumps", "high", "low"]


def test_compact_diff_cuts_a_long_change_short():
    older = " ".join(f"w{i}" for i in range(40))
    newer = " ".join(f"v{i}" for i in range(40))
    deleted = [s for s in compact(older, newer, longest=5) if s.op == "delete"]
    assert deleted == [Segment("delete", "w0 w1 w2 w3 w4 …")]


def test_compact_diff_of_equal_texts_shows_their_beginning():
    text = " ".join(f"w{i}" for i in range(40))
    assert compact(text, text, longest=3) == [Segment("equal", "w0 w1 w2 …")]


def test_a_text_in_capitals_names_nothing():
    older, newer = "ADA PREFERS DARK MODE.", "Ada prefers light mode."
    assert differing_words(older, newer) == []


def test_a_changed_mark_shows_with_its_letter():
    """A Thai tone mark changed: the letter it sits on is the change, not the mark alone (which
    renders as nothing)."""
    left, right = diff.side_by_side("ไปเยี่ยมป่า", "ไปเยี่ยมป้า")
    assert [s.text for s in left if s.op == "delete"] == ["ป่"]
    assert [s.text for s in right if s.op == "insert"] == ["ป้"]


def test_a_long_unspaced_sentence_shows_its_changed_character_in_a_compact_diff():
    """A sentence of Chinese is one word: the queue's row shows the character changed with a
    few characters either side, not the whole sentence struck out and written again."""
    old = "我们决定把数据库迁移到新的服务器上因为旧的服务器的磁盘空间已经不够用了迁移将在下周一进行"
    segments = diff.compact(old, old.replace("磁盘", "硬盘"))
    assert [(s.op, s.text) for s in segments if s.op in ("delete", "insert")] == [
        ("delete", "磁"),
        ("insert", "硬"),
    ]
    shown = "".join(s.text for s in segments if s.op == "equal")
    assert len(shown) == 2 * diff.CONTEXT_CHARACTERS


def test_the_same_words_typed_decomposed_show_as_the_same():
    composed_text = "Chúng tôi đã chuyển"
    decomposed = unicodedata.normalize("NFD", composed_text)
    left, right = diff.side_by_side(composed_text, decomposed)
    assert {s.op for s in [*left, *right]} == {"equal"}


def test_another_word_shows_whole_not_letters_interleaved():
    left, right = diff.side_by_side("الاجتماع في مارس", "الاجتماع في أبريل")
    assert [s.text for s in left if s.op == "delete"] == ["مارس"]
    assert [s.text for s in right if s.op == "insert"] == ["أبريل"]


def test_the_same_name_typed_decomposed_is_no_warning():
    assert not text_differences("Zoë ships it", unicodedata.normalize("NFD", "Zoë ships it")).warns


def test_inline_keeps_both_what_a_text_lacks_and_adds():
    segments = diff.inline("use port 8080 now", "use the port 8081 now")
    changes = [(s.op, s.text) for s in segments if s.op != "equal"]
    assert changes == [("insert", " the"), ("delete", "0"), ("insert", "1")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Backups run nightly at 02:00 on the primary.",
            "Backups run nigthly at 03:00 on primary.",
        ),
        ("الموعد في مارس القادم", "الموعد في أبريل القادم"),
        ("ไปเยี่ยมป่าที่เชียงใหม่", "ไปเยี่ยมป้าที่เชียงใหม่"),
    ],
)
def test_inline_is_side_by_side_in_one_line(a, b):
    """The cluster page's line and the pair page's two sides tell the same changes."""
    left, right = side_by_side(a, b)
    segments = diff.inline(a, b)
    assert [s.text for s in segments if s.op == "delete"] == [
        s.text for s in left if s.op == "delete"
    ]
    assert [s.text for s in segments if s.op == "insert"] == [
        s.text for s in right if s.op == "insert"
    ]


@pytest.mark.parametrize(
    ("a", "b", "changed"),
    [
        ("월요일에 회의", "화요일에 회의", "화"),
        ("会議は月曜日です", "会議は火曜日です", "火"),
    ],
)
def test_a_changed_weekday_written_onto_a_word_is_outlined(a, b, changed):
    _, right = side_by_side(a, b)
    assert [(s.text, s.flag) for s in right if s.op == "insert"] == [(changed, "weekday")]


def test_a_sentence_s_other_changes_are_not_marked_as_its_weekday():
    older = "我们决定把四台数据库服务器迁移到新的机房，时间定在星期三晚上十点"
    newer = older.replace("四台", "五台").replace("星期三", "星期日")
    _, right = side_by_side(older, newer)
    assert next(s for s in right if s.text == "五").flag == ""


def test_a_run_of_numerals_too_long_for_a_number_is_compared_as_written():
    """600 of 亿 made a number of 4,800 digits, which Python refuses to write out: a 500."""
    older = "服务器一共有一" + "亿" * 600 + "台，全部在线"
    newer = older.replace("在线", "离线")
    assert differing_numbers(older, newer) == ([], [])
    assert differing_numbers(older, older.replace("一亿", "二亿", 1)) == (
        ["一" + "亿" * 600],
        ["二" + "亿" * 600],
    )


def test_long_repetitive_texts_are_compared_between_their_common_ends():
    """Two drawers of 200,000 characters of one ideograph: SequenceMatcher alone took time
    growing with the square of their length (minutes, on an item page)."""
    older = "服务器一共有一" + "亿" * 200_000 + "台。"
    newer = older[:-1] + "！"
    _, right = side_by_side(older, newer)
    assert [s.text for s in right if s.op == "insert"] == ["！"]
    # Their middles past COMPARED_MAX apart: replaced whole, not compared.
    found = sequences.opcodes("x" + "亿" * 3000 + "y", "x" + "万" * 3000 + "y")
    assert found == [
        ("equal", 0, 1, 0, 1),
        ("replace", 1, 3001, 1, 3001),
        ("equal", 3001, 3002, 3001, 3002),
    ]


def test_a_run_of_numerals_is_valued_up_to_its_bound_and_written_past_it():
    at_bound = "二" * (numerals.VALUED_MAX - 1) + "十"
    assert numerals.value(at_bound) == str(2 * 10)  # units only add: the last 二 with its 十
    assert numerals.value(at_bound + "十") == at_bound + "十"


def test_sequences_up_to_the_bound_are_compared_whole_and_longer_ones_by_their_middle():
    """At COMPARED_MAX items SequenceMatcher aligns them as it always did (the run of x in
    common found); one more, and the part between their common ends (here all of them) is
    replaced whole."""
    bound = sequences.COMPARED_MAX
    a, b = ["a"] + ["x"] * (bound - 1), ["x"] * (bound - 1) + ["b"]
    assert sequences.opcodes(a, b) == [
        ("delete", 0, 1, 0, 0),
        ("equal", 1, bound, 0, bound - 1),
        ("insert", bound, bound, bound - 1, bound),
    ]
    a, b = ["a"] + ["x"] * bound, ["x"] * bound + ["b"]
    assert sequences.opcodes(a, b) == [("replace", 0, bound + 1, 0, bound + 1)]


def test_a_compact_diff_flags_a_number_only_where_the_numbers_differ():
    """The queue's row outlined "9h46" against "9H46" as a number changed, which the item page
    did not warn of: the same numbers, written in another case."""
    same = compact("bpm, slept 9h46.", "BPM, SLEPT 9H46.")
    assert [s.op for s in same] == ["case"]  # the same words in capitals, marked as such
    assert "number differs" not in compact_diff(same)
    changed = compact("use port 8080 today", "use port 8081 today")
    assert [(s.op, s.text, s.flag) for s in changed if s.op != "equal"] == [
        ("delete", "8080", "number"),
        ("insert", "8081", "number"),
    ]
    assert 'title="number differs"' in compact_diff(changed)


def test_a_typo_in_a_text_written_again_in_capitals_is_the_change_shown():
    """Aligned as written, every word of a text in capitals was removed and inserted again, and
    the typo was lost among them."""
    older = "Backups run nightly at two in the morning and are kept for thirty days."
    newer = "BACKUPS RUN NIGHTLY AT TWO IN TEH MORNING AND ARE KEPT FOR THIRTY DAYS."
    changed = [s for s in compact(older, newer) if s.op in ("delete", "insert")]
    assert [(s.op, s.text) for s in changed] == [("delete", "the"), ("insert", "TEH")]
    _, right = side_by_side(older, newer)
    assert "".join(s.text for s in right if s.op == "case").startswith("BACKUPS RUN")


def test_each_text_shows_its_own_words_its_case_changes_marked():
    """A cluster's member written in capitals showed the canonical's words, unmarked; the
    queue's row showed the older text's."""
    older = "Ada prefers dark mode in every editor and terminal."
    newer = "ADA PREFERS DARK MODE in every editor and terminal."
    assert diff.inline(older, newer) == [
        Segment("case", "ADA PREFERS DARK MODE", was="Ada prefers dark mode"),
        Segment("equal", " in every editor and terminal."),
    ]
    assert compact(older, older.upper()) == [
        Segment("case", older.upper(), was=older),
    ]
    left, right = side_by_side(older, newer)
    assert left[0] == Segment("case", "Ada prefers dark mode", was="ADA PREFERS DARK MODE")
    assert right[0] == Segment("case", "ADA PREFERS DARK MODE", was="Ada prefers dark mode")
    assert '<span class="visually-hidden">in another case: </span>ADA PREFERS' in compact_diff(
        compact(older, newer)
    )


def test_a_change_keeps_the_newer_s_case_around_it():
    segments = compact("Use port 8080 for the API", "USE PORT 8081 FOR THE API")
    assert [(s.op, s.text) for s in segments] == [
        ("case", "USE PORT"),
        ("delete", "8080"),
        ("insert", "8081"),
        ("case", "FOR THE"),
        ("equal", "API"),  # written alike
    ]


DISK = "Disk usage alerts fire at eighty percent on the database volume."


@pytest.mark.parametrize(
    ("text", "other", "shown"),
    [
        pytest.param("Short enough.", "Short enough!", "Short enough.", id="whole"),
        pytest.param(
            DISK.replace("eighty", "ninety"),
            DISK,
            "Disk usage alerts fire at ninety percent on the d…",
            id="differs-early",
        ),
        pytest.param(
            DISK.replace(".", "!"),
            DISK,
            "…fire at eighty percent on the database volume!",
            id="differs-at-the-end",
        ),
        pytest.param(
            DISK.replace("the database", "a database") + " Page the on-call engineer.",
            DISK,
            "…percent on a database volume. Page the on-call e…",
            id="differs-in-the-middle",
        ),
        pytest.param("x" * 60, "x" * 60, "x" * 49 + "…", id="the-same-from-the-start"),
        pytest.param(
            "x" * 100 + " y", "x" * 100 + " z", "…" + "x" * 46 + " y", id="one-space-before-it"
        ),
    ],
)
def test_a_list_s_excerpt_shows_where_a_text_differs(text, other, shown):
    """The cluster list cut every member at 50 characters: two looked the same."""
    assert diff.excerpt(text, other) == shown
    assert len(shown) <= 50


@pytest.mark.parametrize(
    ("old", "new"),
    [("eighty", "ninety"), ("owned", "monitored"), ("light", "night-time")],
)
def test_a_word_changed_by_more_than_two_letters_shows_whole(old, new):
    """Letter by letter they read "nin[e]igh[ty]" and "o[w]ned" against "[m]oni[tor]ed"."""
    older, newer = f"alerts fire at {old} percent", f"alerts fire at {new} percent"
    left, right = side_by_side(older, newer)
    assert [s.text for s in left if s.op == "delete"] == [old]
    assert [s.text for s in right if s.op == "insert"] == [new]
    assert [(s.op, s.text) for s in diff.inline(older, newer) if s.op != "equal"] == [
        ("delete", old),
        ("insert", new),
    ]


@pytest.mark.parametrize(
    ("old", "new", "letters"),
    [("refreshed", "refershed", 2), ("storage", "storge", 1), ("documents.", "documents!", 1)],
)
def test_a_letter_or_two_changed_shows_as_letters(old, new, letters):
    left, right = side_by_side(old, new)
    assert sum(len(s.text) for s in left if s.op == "delete") <= letters
    assert "".join(s.text for s in right) == new
