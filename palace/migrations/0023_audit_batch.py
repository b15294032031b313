import importlib

from django.db import migrations, models

# 0021's operation: CREATE INDEX CONCURRENTLY on PostgreSQL (the audit log takes its writes while
# the index is built), a plain CREATE INDEX elsewhere.
AddIndexConcurrentlyOnPostgreSQL = importlib.import_module(
    "palace.migrations.0021_audit_redirected_entity"
).AddIndexConcurrentlyOnPostgreSQL


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("palace", "0022_import_mentions"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="auditentry",
            index=models.Index(
                condition=models.Q(("batch__isnull", False)),
                fields=["batch"],
                name="audit_batch",
            ),
        ),
    ]
