"""Import from other memory stores and export from this one (see each module).

Callers import from here: `from dedup import imports`."""

from dedup.imports.export import FORMATS as EXPORT_FORMATS
from dedup.imports.export import export_lines, mempalace_path
from dedup.imports.files import Unreadable, check_readable, records_in
from dedup.imports.reversal_report import Reversal
from dedup.imports.reverse import import_reverse
from dedup.imports.run import (
    IMPORT_NAMESPACE,
    READERS,
    Tally,
    client_id,
    import_create,
    import_run,
    legacy_client_id,
    record_wings,
)

__all__ = [
    "EXPORT_FORMATS",
    "IMPORT_NAMESPACE",
    "READERS",
    "Reversal",
    "Tally",
    "Unreadable",
    "check_readable",
    "client_id",
    "export_lines",
    "import_create",
    "import_reverse",
    "import_run",
    "legacy_client_id",
    "mempalace_path",
    "record_wings",
    "records_in",
]
