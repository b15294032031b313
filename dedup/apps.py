from django.apps import AppConfig


class DedupConfig(AppConfig):
    name = "dedup"
    verbose_name = "Deduplication"
