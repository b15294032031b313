"""Full-text index over drawers' normalised text (see palace/fulltext.py)."""

from django.db import migrations

from palace import fulltext


class Migration(migrations.Migration):
    dependencies = [("palace", "0001_initial")]

    operations = [migrations.RunPython(fulltext.install, fulltext.remove)]
