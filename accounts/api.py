"""The token endpoints (docs/api.md): ``POST``/``GET /api/v1/auth/tokens/``, ``DELETE
/api/v1/auth/tokens/{id}/``. Keys are stored only as hashes (django-rest-knox) and expire after
``API_TOKEN_LIFETIME``."""

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response

from . import selectors, services
from .serializers import NewTokenSerializer, TokenCreateSerializer, TokenSerializer


@extend_schema_view(
    list=extend_schema(summary="Your tokens that still work (without their keys)"),
    destroy=extend_schema(summary="Revoke one of your tokens"),
)
class TokenViewSet(mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """Your API tokens. Sign in by session, or send ``username`` and ``password`` in the body of
    ``POST`` to get a token; the key is in that answer only."""

    serializer_class = TokenSerializer
    lookup_field = "token_key"
    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"
    filter_backends: list = []

    def get_permissions(self):
        if self.action == "create":
            return [AllowAny()]
        return [IsAuthenticated()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return selectors.tokens_for_user(user=None).none()
        return selectors.tokens_for_user(user=self.request.user)

    @extend_schema(
        summary="Make a token",
        request=TokenCreateSerializer,
        responses={201: NewTokenSerializer},
    )
    def create(self, request):
        credentials = TokenCreateSerializer(data=request.data)
        credentials.is_valid(raise_exception=True)
        if "username" in credentials.validated_data:
            user = authenticate(
                request,
                username=credentials.validated_data["username"],
                password=credentials.validated_data["password"],
            )
            if user is None or not user.is_active:
                raise exceptions.AuthenticationFailed("Wrong username or password.")
        elif request.user and request.user.is_authenticated:
            user = request.user
        else:
            raise exceptions.NotAuthenticated(
                "Sign in, or send username and password to get a token."
            )
        token, key = services.token_create(user=user)
        token.key = key
        return Response(NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance) -> None:
        services.token_revoke(user=self.request.user, token_id=instance.token_key)
