#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

LOCAL_COMMANDS = {"demo", "simulate"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")
    if len(sys.argv) > 1 and sys.argv[1] in LOCAL_COMMANDS:
        # Local commands that must work on a fresh checkout: the demo (a single-user run on
        # 127.0.0.1) and simulate (prints a result, serves nothing). They ask for debug mode,
        # which lets them start without a SECRET_KEY (a random one is made for the process).
        # An explicit DEBUG in the environment wins.
        os.environ.setdefault("DEBUG", "true")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
