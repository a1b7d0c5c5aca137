"""Reads for users and tokens."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken


def tokens_for_user(*, user: AbstractBaseUser) -> QuerySet[AuthToken]:
    """``user``'s tokens that still work, newest first."""
    return (
        AuthToken.objects.filter(user=user)
        .filter(Q(expiry__isnull=True) | Q(expiry__gt=timezone.now()))
        .order_by("-created", "token_key")
    )
