"""The token endpoints (docs/api.md): ``POST``/``GET /api/v1/auth/tokens/``, ``DELETE
/api/v1/auth/tokens/{id}/``. Keys are stored only as hashes (django-rest-knox) and expire after
``API_TOKEN_LIFETIME``."""

from django.contrib.auth import authenticate
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from knox.models import AuthToken
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from . import selectors, services
from .auth import TokenAuthentication
from .backends import sign_in_refusal
from .guessing import retry_after
from .serializers import NewTokenSerializer, TokenCreateSerializer, TokenSerializer


def _signed_in(request: Request) -> AbstractBaseUser:
    """The request's user, who must be signed in (the permissions let no one else this far)."""
    user = request.user
    if not isinstance(user, AbstractBaseUser) or not user.is_authenticated:
        raise exceptions.NotAuthenticated()
    return user


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

    def get_permissions(self) -> list[BasePermission]:
        if self.action == "create":
            return [AllowAny()]
        return [IsAuthenticated()]

    def get_queryset(self) -> QuerySet[AuthToken]:
        if getattr(self, "swagger_fake_view", False):
            return AuthToken.objects.none()  # the schema's generation has no user
        return selectors.tokens_for_user(user=_signed_in(self.request))

    @extend_schema(
        summary="Make a token",
        request=TokenCreateSerializer,
        responses={201: NewTokenSerializer},
    )
    def create(self, request: Request) -> Response:
        if isinstance(request.successful_authenticator, TokenAuthentication):
            raise exceptions.PermissionDenied(
                "A token cannot make tokens: sign in, or send username and password without one."
            )
        credentials = TokenCreateSerializer(data=request.data)
        credentials.is_valid(raise_exception=True)
        if "username" in credentials.validated_data:
            user: AbstractBaseUser | None = authenticate(
                request,
                username=credentials.validated_data["username"],
                password=credentials.validated_data["password"],
            )
            refusal = sign_in_refusal(request)
            if refusal is not None:
                raise exceptions.Throttled(
                    wait=retry_after(refusal.wait),
                    detail=f"Too many failed sign-ins for this account or address: try again in"
                    f" {retry_after(refusal.wait)} seconds.",
                )
            if user is None or not user.is_active:
                raise exceptions.AuthenticationFailed("Wrong username or password.")
        elif isinstance(request.user, AbstractBaseUser) and request.user.is_authenticated:
            user = request.user
        else:
            raise exceptions.NotAuthenticated(
                "Sign in, or send username and password to get a token."
            )
        token, key = services.token_create(user=user)
        token.key = key
        return Response(NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: AuthToken) -> None:
        services.token_revoke(user=_signed_in(self.request), token_id=instance.token_key)
