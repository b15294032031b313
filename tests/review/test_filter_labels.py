"""The filters' labels are written once, on the forms: the queue's and the audit log's pages label
each field with its form's label, and a refused filter's message names the field by it (the
page said "to" where the message said "Similarity to")."""

import re
from html.parser import HTMLParser

import pytest

from review.forms import AuditFilterForm, QueueFilterForm
from review.templatetags.queue_rows import label_drawn_as
from review.views.common import in_console_words

pytestmark = pytest.mark.django_db

PAGES = {"/": QueueFilterForm, "/audit/": AuditFilterForm}
CONTROLS = ("input", "select", "textarea")
VOID = ("input", "br", "img", "hr", "meta", "link")


class LabelNames(HTMLParser):
    """Each form control's name attribute, to the name its `<label>` gives it: the label's text
    less the control's own (a select's options) and what is hidden from screen readers; the
    browser's own computation is checked in tests/browser/test_filter_labels.py."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[str, str] = {}
        self._label: list[str] | None = None
        self._controls: list[str] = []
        self._open: list[tuple[str, bool]] = []  # elements inside the label: (tag, unspoken)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag == "label":
            self._label, self._controls, self._open = [], [], []
        elif self._label is not None and tag in CONTROLS:
            self._controls.append(given.get("name") or "")
        if self._label is not None and tag not in VOID and tag != "label":
            self._open.append((tag, tag in CONTROLS or given.get("aria-hidden") == "true"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "label" and self._label is not None:
            for control in self._controls:
                self.names[control] = " ".join("".join(self._label).split())
            self._label = None
        elif self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._label is not None and not any(unspoken for _, unspoken in self._open):
            self._label.append(data)


def label_names(body: str) -> dict[str, str]:
    parser = LabelNames()
    parser.feed(body)
    return parser.names


FIELDS = [
    pytest.param(url, form, name, id=f"{url} {name}")
    for url, form in PAGES.items()
    for name in form.base_fields
]


@pytest.mark.parametrize(("url", "form", "name"), FIELDS)
def test_the_form_labels_each_filter(url, form, name):
    assert form.base_fields[name].label, f"{form.__name__}.{name} has no label of its own"


@pytest.mark.parametrize(("url", "form", "name"), FIELDS)
def test_the_page_names_each_filter_by_its_forms_label(as_curator, url, form, name):
    names = label_names(as_curator.get(url).content.decode())
    assert names.get(name) == form()[name].label  # as Django renders it (`{{ form.q.label }}`)


def test_the_upper_similarity_is_drawn_short_and_labelled_in_full(as_curator):
    """Beside "Similarity from", the page draws "to"; the label's text is still the form's
    whole label, its first word visually hidden."""
    body = as_curator.get("/").content.decode()
    drawn = '<label><span class="visually-hidden">Similarity</span> to <input type="text"'
    assert drawn in body
    assert QueueFilterForm.base_fields["max_similarity"].label == "Similarity to"


def test_a_label_drawn_shorter_hides_the_words_before():
    field = QueueFilterForm()["max_similarity"]
    drawn = label_drawn_as(field, "to")
    assert drawn == '<span class="visually-hidden">Similarity</span> to'


def test_a_label_not_ending_in_the_words_drawn_is_drawn_whole():
    """A label changed on the form never leaves the template's short word stale."""
    form = QueueFilterForm()
    form.fields["max_similarity"].label = "Similarity <= "
    assert label_drawn_as(form["max_similarity"], "to") == "Similarity &lt;= "


REFUSALS = {
    "a similarity not a number": ("/", {"min_similarity": "lots"}, ["min_similarity"]),
    "the upper similarity out of range": ("/", {"max_similarity": "2"}, ["max_similarity"]),
    "a similarity range upside down": (
        "/",
        {"min_similarity": "0.9", "max_similarity": "0.1"},
        ["min_similarity", "max_similarity"],
    ),
    "a type not offered": ("/", {"type": "pages"}, ["type"]),
    "a sweep not a number": ("/", {"run": "last"}, ["run"]),
    "an action not logged": ("/audit/", {"action": "review.shred"}, ["action"]),
    "a date not a date": ("/audit/", {"until": "soon"}, ["until"]),
    "a date range upside down": (
        "/audit/",
        {"since": "2026-12-05", "until": "2026-12-01"},
        ["since", "until"],
    ),
}


def alert(body: str) -> str:
    """The text of the page's refusal (`<p class="error" role="alert">`)."""
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', body, re.DOTALL)
    assert found, "no refusal shown"
    return found.group(1)


@pytest.mark.parametrize(("url", "params", "fields"), REFUSALS.values(), ids=REFUSALS)
def test_a_refused_filter_names_its_field_by_the_forms_label(as_curator, url, params, fields):
    response = as_curator.get(url, params)
    assert response.status_code == 400
    message = alert(response.content.decode())
    labels = [PAGES[url].base_fields[name].label for name in fields]
    assert message.startswith(f"“{labels[0]}”")
    for label in labels[1:]:
        assert f"“{label}”" in message


def test_a_refusal_names_the_bound_forms_labels():
    """The message reads the labels of the form it refuses, not a list of its own."""
    form = QueueFilterForm({"min_similarity": "0.9", "max_similarity": "0.1"})
    form.fields["max_similarity"].label = "Similarity at most"  # this form's field alone
    message = in_console_words("min_similarity must not be above max_similarity.", form)
    assert message == "“Similarity from” must not be above “Similarity at most”."


def test_a_field_of_another_form_stays_a_word():
    """ "until" is the audit log's field, not the queue's: in the queue's words it is a word."""
    message = in_console_words("q is blank until min_similarity is set.", QueueFilterForm({}))
    assert message == "“Search” is blank until “Similarity from” is set."
