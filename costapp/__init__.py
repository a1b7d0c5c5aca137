"""GPU TCO: the Django project and the cost side of the domain."""

from .celery import app as celery_app

__all__ = ["celery_app"]
