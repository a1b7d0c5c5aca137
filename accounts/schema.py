"""How the API's token authentication appears in the OpenAPI schema (drf-spectacular): the same
security scheme as knox's (``Authorization: Token <key>``), for the project's one-query
``accounts.auth.TokenAuthentication``."""

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme


class TokenScheme(KnoxTokenScheme):
    """knox's scheme, for ``accounts.auth.TokenAuthentication`` (a subclass of knox's, which
    drf-spectacular does not match by itself)."""

    target_class = "accounts.auth.TokenAuthentication"
