"""factory_boy factories for scenarios (users: ``tests/factories.py``)."""

import factory

from accounts.roles import ANALYST
from costapp.models import Scenario
from tests.costapp.runs_helpers import scenario_document
from tests.factories import UserFactory


class ScenarioFactory(factory.django.DjangoModelFactory):
    """A saved scenario owned by an analyst; its document the shipped Monte Carlo fleet scenario
    (``scenario_document()``) unless given."""

    class Meta:
        model = Scenario

    owner = factory.SubFactory(UserFactory, roles=[ANALYST])
    name = factory.Sequence(lambda n: f"scenario {n}")
    document = factory.LazyFunction(scenario_document)
