"""An index per link table for the queue's "most uncertain first" below the threshold: similarity
downward and ties by id upward, so tied links (entity links often share one similarity) are read
in order instead of sorted.

SQLite's planner chooses between this index and the queue's (status, similarity, id, all
downward) by their statistics: left with the old index's and none of the new one's, it read
every open link through the new one and sorted them for the queue's second page (3.3 s at
1,000,000 open items). So the link tables are analysed here, as they were before, to give both
indexes theirs (a store never analysed has none, and the planner chooses by the order asked).
"""

from django.db import migrations, models


class RunSQLOn(migrations.RunSQL):
    """RunSQL on one database vendor only: the other has its own statements or needs none."""

    def __init__(self, vendor, sql, reverse_sql):
        super().__init__(sql, reverse_sql, elidable=False)
        self.vendor = vendor

    def deconstruct(self):
        return (self.__class__.__name__, [self.vendor, self.sql, self.reverse_sql], {})

    def _run_sql(self, schema_editor, sqls):
        if schema_editor.connection.vendor == self.vendor:
            super()._run_sql(schema_editor, sqls)


ANALYZE = ["ANALYZE palace_drawerlink", "ANALYZE palace_entitylink"]


class Migration(migrations.Migration):
    dependencies = [("palace", "0015_drawer_fulltext_room_terms")]

    operations = [
        migrations.AddIndex(
            model_name="drawerlink",
            index=models.Index(
                fields=["status", "-similarity", "id"], name="drawer_link_uncertain"
            ),
        ),
        migrations.AddIndex(
            model_name="entitylink",
            index=models.Index(
                fields=["status", "-similarity", "id"], name="entity_link_uncertain"
            ),
        ),
        RunSQLOn("sqlite", ANALYZE, ANALYZE),
    ]
