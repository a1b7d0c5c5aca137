"""The scenarios and runs API (docs/api.md, "Scenarios and runs"), under /api/v1/."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter(trailing_slash=True)

urlpatterns = router.urls
