"""Token authentication (django-rest-knox) in one small query: the token, its user and the role.

knox checks a key by its first characters (``token_key``), then the SHA-512 of the whole key
against the stored digest; an expired token is deleted and refused. This does the same, with two
differences in cost only:

- knox loads all the user's tokens on every request to delete the expired ones; here that
  housekeeping is done when a token is made (``accounts.services.token_create``), and a request
  deletes only the expired token it presented;
- the token, the user's id, name and flags, and the names of the user's groups (for the role,
  ``accounts.roles``, which the permissions ask next) come in one hand-written query, whose text
  is built once from the models' metadata. Building the same through the ORM costs several times
  more CPU than the query itself, on every API request. The user's other fields, and the token's
  dates, load on first use.
"""

import binascii
from functools import cache
from hmac import compare_digest
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field
from django.db.models.options import Options
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox import auth
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

from .roles import ROLES, remember_role

USER_FIELDS = ("is_active", "is_superuser", "is_staff")
"""User flags read with the token (besides its id and username), when the user model has them."""


def _user_fields() -> list[str]:
    """The user fields read with the token, in the model's order (as ``from_db`` takes them)."""
    user = get_user_model()
    wanted = {user._meta.pk.attname, user.USERNAME_FIELD, *USER_FIELDS}
    return [field.attname for field in user._meta.concrete_fields if field.attname in wanted]


def _column(meta: "Options[Any]", name: str) -> str:  # Options is generic in the stubs only
    """The database column of the field ``name`` (a concrete field: the token's and the user's
    fields read here all are)."""
    field = meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise TypeError(f"{meta.label}.{name} is not a column")
    return field.column


@cache
def _token_sql(vendor: str) -> str:
    """The query for one ``token_key``: a row per token and group of its user (one row with no
    group name for a user in no group). ``vendor`` keys the cache by database kind."""
    connection = connections[DEFAULT_DB_ALIAS]
    q = connection.ops.quote_name
    token_meta, user_meta = get_token_model()._meta, get_user_model()._meta
    membership = get_user_model().groups.through._meta
    group_meta = Group._meta

    def token_col(name: str) -> str:
        return f"t.{q(_column(token_meta, name))}"

    user_cols = ", ".join(f"u.{q(_column(user_meta, name))}" for name in _user_fields())
    return (
        f"SELECT {token_col('digest')}, {token_col('token_key')}, {token_col('user')},"
        f" ({token_col('expiry')} IS NOT NULL AND {token_col('expiry')} < %s), {user_cols},"
        f" g.{q(group_meta.get_field('name').column)}"
        f" FROM {q(token_meta.db_table)} t"
        f" INNER JOIN {q(user_meta.db_table)} u ON u.{q(user_meta.pk.column)} = {token_col('user')}"
        f" LEFT JOIN {q(membership.db_table)} m"
        f" ON m.{q(membership.get_field('user').column)} = {token_col('user')}"
        f" LEFT JOIN {q(group_meta.db_table)} g"
        f" ON g.{q(group_meta.pk.column)} = m.{q(membership.get_field('group').column)}"
        f" WHERE {token_col('token_key')} = %s"
    )


def token_rows(token_key: str) -> list[tuple[Any, bool, list[bool]]]:
    """The tokens whose ``token_key`` is ``token_key``: each with its user attached (the other
    fields of both deferred), whether it has expired, and the user's role flags (per ``ROLES``)."""
    connection = connections[DEFAULT_DB_ALIAS]
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_token_sql(connection.vendor), [now, token_key])
        rows = cursor.fetchall()
    token_model, user_model = get_token_model(), get_user_model()
    user_fields = _user_fields()
    tokens: dict[str, tuple[Any, bool, set[str]]] = {}
    for row in rows:
        digest, key, user_id, expired = row[:4]
        if digest not in tokens:
            user_values = list(row[4 : 4 + len(user_fields)])
            for index, name in enumerate(user_fields):
                if name in USER_FIELDS:  # SQLite answers 0 / 1
                    user_values[index] = bool(user_values[index])
            user = user_model.from_db(DEFAULT_DB_ALIAS, user_fields, user_values)
            token = token_model.from_db(  # digest, token_key, user: the model's order
                DEFAULT_DB_ALIAS, ["digest", "token_key", "user_id"], [digest, key, user_id]
            )
            token.user = user
            tokens[digest] = (token, bool(expired), set())
        if row[-1] is not None:
            tokens[digest][2].add(row[-1])
    return [
        (token, expired, [role in groups for role in ROLES])
        for token, expired, groups in tokens.values()
    ]


class TokenAuthentication(auth.TokenAuthentication):
    """``Authorization: Token <key>``, as knox's, reading token, user and role in one query."""

    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        msg = _("Invalid token.")
        key = token.decode("utf-8")
        for auth_token, expired, flags in token_rows(key[: CONSTANTS.TOKEN_KEY_LENGTH]):
            if expired:
                username = auth_token.user.get_username()
                auth_token.delete()
                token_expired.send(sender=self.__class__, username=username, source="auth_token")
                continue
            try:
                digest = hash_token(key)
            except (TypeError, binascii.Error) as exc:
                raise exceptions.AuthenticationFailed(msg) from exc
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                remember_role(auth_token.user, flags)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed(msg)
