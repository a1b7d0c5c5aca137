"""URLs of the catalog pages."""

from django.urls import path

from . import views

urlpatterns = [
    path("prices/", views.prices, name="prices"),
    path("gpus/<slug:slug>/cheapest/", views.gpu_cheapest, name="gpu-cheapest"),
]
