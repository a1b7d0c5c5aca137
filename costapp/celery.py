"""The Celery app.

With ``REDIS_URL`` set, tasks go to Redis and real workers run them; with nothing set, tasks run
in-process (``task_always_eager``) so the embedded default needs no server.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")

app = Celery("costapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
