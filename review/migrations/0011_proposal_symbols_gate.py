"""A drawer proposal stored before the symbols gate (`merge_gates.drawer_gates`'s
`symbols_differ`) is given its verdict, asked of the texts it holds: the what-if table and
Apply's confirm page read the stored gates, and counted such a pair ("...: ✅" against "...: ❌")
among the merges that Apply, asking the texts, then only links."""

import unicodedata

import regex
from django.db import migrations

BATCH = 1000
# The rule as it stood when written (`dedup.policy.word_flags.changed_symbols`), held here: a
# migration imports no live code. A symbol with what is drawn with it, less its skin tone and
# presentation selector, each character in its usual width; compared in order and in number.
SYMBOL = regex.compile(r"(?=[\p{So}\p{Sm}\p{Sc}])\X")
STYLE = regex.compile(r"[\p{Sk}\uFE0E\uFE0F]")
USUAL_WIDTH = {
    code: int(decomposition.split()[1], 16)
    for code in (0x3000, *range(0xFF00, 0xFFF0))
    if (decomposition := unicodedata.decomposition(chr(code))).startswith(("<wide>", "<narrow>"))
}


def symbols(text):
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).translate(USUAL_WIDTH))
    return [STYLE.sub("", symbol) for symbol in SYMBOL.findall(text)]


def symbols_gate(apps, schema_editor):
    Proposal = apps.get_model("review", "Proposal")
    pending = Proposal.objects.filter(kind="drawer").exclude(gates__has_key="symbols_differ")
    batch = []
    for proposal in pending.only("id", "gates", "texts").iterator(chunk_size=BATCH):
        texts = proposal.texts or {}
        differ = symbols(texts.get("older", "")) != symbols(texts.get("newer", ""))
        proposal.gates = {**(proposal.gates or {}), "symbols_differ": differ}
        batch.append(proposal)
        if len(batch) == BATCH:
            Proposal.objects.bulk_update(batch, ["gates"])
            batch = []
    Proposal.objects.bulk_update(batch, ["gates"])


class Migration(migrations.Migration):
    dependencies = [("review", "0010_undo_offers")]

    operations = [migrations.RunPython(symbols_gate, migrations.RunPython.noop, elidable=True)]
