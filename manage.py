#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A setting the environment got wrong (a missing SECRET_KEY with DEBUG off, a threshold
        # out of range): its one-line reason, not Django's traceback through the command lookup.
        sys.exit(f"Castellan cannot start: {error}")


if __name__ == "__main__":
    main()
