"""factory_boy factories for the users every package's tests need, with their roles. The
catalog's rows are in ``tests/hardware/factories.py``, scenarios in ``tests/costapp/factories.py``."""

from collections.abc import Iterable
from typing import Any

import factory
from django.contrib.auth.models import Group, User


class UserFactory(factory.django.DjangoModelFactory):
    """A user whose password is "pw-" and the username (unless given), in the groups of ``roles``
    (none unless given): ``UserFactory(username="ana", roles=[ANALYST])``."""

    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user-{n}")
    password = factory.django.Password(factory.LazyAttribute(lambda o: f"pw-{o.username}"))

    @factory.post_generation
    def roles(self, create: bool, extracted: Iterable[str] | None, **kwargs: Any) -> None:
        if create and extracted:
            # get_or_create: transactional tests flush the groups the migrations made
            self.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in extracted))
