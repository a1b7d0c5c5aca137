"""The catalog API (docs/api.md, "Catalog"), under /api/v1/."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter(trailing_slash=True)

urlpatterns = router.urls
