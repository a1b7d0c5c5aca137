#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")
    if len(sys.argv) > 1 and sys.argv[1] == "demo":
        # The demo is a local, single-user run on 127.0.0.1: it asks for debug mode, which
        # also lets it start without a SECRET_KEY (a random one is made for the process).
        os.environ.setdefault("DEBUG", "true")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
