"""The catalog API (docs/api.md, "Catalog"), under /api/v1/."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from .refresh import PriceChangesView, RefreshRunViewSet

router = DefaultRouter(trailing_slash=True)
router.register("refresh-runs", RefreshRunViewSet)

# prices/changes/ before the router's routes, so no prices/{id}/ route takes it.
urlpatterns = [path("prices/changes/", PriceChangesView.as_view(), name="price-changes")]
urlpatterns += router.urls
