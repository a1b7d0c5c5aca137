"""The catalog API (docs/api.md, "Catalog"), under /api/v1/."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from hardware.api import hosted, views
from hardware.api.coverage import CoverageView
from hardware.api.observations import MarketObservationViewSet
from hardware.api.refresh import PriceChangesView, RefreshRunViewSet

router = DefaultRouter(trailing_slash=True)
router.register("gpus", views.GpuModelViewSet, basename="gpu")
router.register("providers", views.ProviderViewSet, basename="provider")
router.register("regions", views.RegionViewSet, basename="region")
router.register("offers", views.InstanceOfferViewSet, basename="offer")
router.register("prices", views.InstancePriceViewSet, basename="price")
router.register("egress-tiers", views.EgressTierViewSet, basename="egress-tier")
router.register("dedicated-quotes", views.DedicatedQuoteViewSet, basename="dedicated-quote")
router.register("purchase-quotes", views.PurchaseQuoteViewSet, basename="purchase-quote")
router.register("refresh-runs", RefreshRunViewSet)
router.register("token-prices", hosted.TokenPriceViewSet, basename="token-price")
router.register("assumptions", hosted.AssumptionViewSet, basename="assumption")
router.register("market-observations", MarketObservationViewSet, basename="market-observation")

# prices/changes/ and the exports before the router's routes, so no prices/{id}/ route takes them.
urlpatterns = [
    path("prices/changes/", PriceChangesView.as_view(), name="price-changes"),
    path("coverage/", CoverageView.as_view(), name="coverage-list"),
    path(
        "prices/current.csv",
        views.CurrentPricesExport.as_view(kind="csv"),
        name="price-current-csv",
    ),
    path(
        "prices/current.xlsx",
        views.CurrentPricesExport.as_view(kind="xlsx"),
        name="price-current-xlsx",
    ),
    *router.urls,
]
