"""Authentication endpoints of the API (docs/api.md): tokens, under /api/v1/auth/."""

urlpatterns: list = []
