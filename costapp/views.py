"""Server-rendered pages and the health check."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from hardware.models import GpuModel

from .health import health_report


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The home page: the GPU models in the catalog."""
    return render(request, "home.html", {"gpus": GpuModel.objects.all()})


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """State of the database and the broker; 200 when both are usable, 503 otherwise."""
    report = health_report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)
