"""What accounts keep in the database besides Django's users and groups: the failed sign-ins
counted while there is no Redis to count them in (``accounts.guessing``)."""

from django.db import models


class SignInLog(models.Model):
    """The sliding log of sign-in attempts under one key (an account's or an address's digest):
    ``entries`` is ``[[time, member], ...]``, the attempts still in the window. Every process of
    the site counts in the same rows, so the limits hold across them without Redis."""

    key = models.CharField(max_length=100, primary_key=True)
    entries = models.JSONField(default=list)
    updated = models.DateTimeField(auto_now=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {len(self.entries)} attempts"
