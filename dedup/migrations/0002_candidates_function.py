"""The PostgreSQL function a write's candidates come from (see dedup/candidates.py)."""

from django.db import migrations

from dedup import candidates


class Migration(migrations.Migration):
    dependencies = [("dedup", "0001_dedup_keys"), ("palace", "0003_review_decisions")]

    operations = [
        migrations.RunPython(
            candidates.install_postgresql_function, candidates.remove_postgresql_function
        )
    ]
