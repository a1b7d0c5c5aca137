"""Authentication endpoints of the API (docs/api.md): tokens, under /api/v1/auth/."""

from rest_framework.routers import SimpleRouter

from .api import TokenViewSet

router = SimpleRouter(trailing_slash=True)
router.register("tokens", TokenViewSet, basename="token")

urlpatterns = router.urls
