"""URLs of the catalog pages."""

from django.urls import path

from hardware import views
from hardware.hosted import views as hosted_views

urlpatterns = [
    path("gpus/", views.gpus, name="gpus"),
    path("prices/", views.prices, name="prices"),
    path("quotes/", views.quotes, name="quotes"),
    path("quotes/<str:kind>/new/", views.quote_edit, name="quote-create"),
    path("quotes/<str:kind>/<int:pk>/edit/", views.quote_edit, name="quote-edit"),
    path("gpus/<slug:slug>/cheapest/", views.gpu_cheapest, name="gpu-cheapest-page"),
    path("token-prices/", hosted_views.token_prices, name="token-prices"),
    path("assumptions/", hosted_views.assumptions, name="assumptions"),
    path("catalog/coverage/", views.coverage, name="coverage"),
]
