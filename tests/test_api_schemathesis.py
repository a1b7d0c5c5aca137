"""The whole API against its own OpenAPI schema (schemathesis), signed in with a token of each
role, under two seeds: for a bounded number of generated requests per operation, no answer is a
5xx, none has a status the schema does not list, and none violates the schema. The test reports
how many requests it made."""

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, seed
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.roles import ROLES
from accounts.services import token_create
from hardware.models import EgressTier
from tests.api_crud import make_base, make_price
from tests.factories import UserFactory

EXAMPLES_PER_OPERATION = 8
"""Generated requests per operation, role and seed: over 5 000 in all, a fixed count, so the
test's time is bounded."""
REQUESTS_AT_LEAST = 5_000
SEEDS = (1, 2)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]


@pytest.mark.long
@pytest.mark.django_db
@pytest.mark.filterwarnings("error::django.core.paginator.UnorderedObjectListWarning")
def test_every_operation_answers_within_its_schema_and_never_5xx(
    django_user_model, settings, request, capsys
):
    settings.API_THROTTLE_RATE = "100000/minute"
    base = make_base()
    make_price(base.offer, base.region, "23.92")
    EgressTier.objects.create(provider=base.provider, up_to_tb=None, usd_per_gb="0.09")
    keys = {}
    for role in ROLES:
        _, keys[role] = token_create(user=UserFactory(username=f"schema-{role}", roles=[role]))

    # As Django's test client does: the requests run inside this test's transaction, so the
    # request signals must not close the database connection between them.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    request.addfinalizer(lambda: signals.request_started.connect(close_old_connections))
    request.addfinalizer(lambda: signals.request_finished.connect(close_old_connections))
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    requests_made = 0
    operations = 0

    def checked(operation, headers, run_seed):
        @seed(run_seed)
        @hypothesis_settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case):
            nonlocal requests_made
            response = case.call(headers=headers)
            requests_made += 1
            case.validate_response(response, checks=CHECKS, headers=headers)

        return check

    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for role, key in keys.items():
            for run_seed in SEEDS:
                try:
                    checked(operation, {"Authorization": f"Token {key}"}, run_seed)()
                except Exception as exc:  # collect every failure, then fail once
                    failures.append(
                        f"{operation.method.upper()} {operation.path} ({role}, seed {run_seed}):"
                        f" {exc}"
                    )

    with capsys.disabled():  # shown in the test run's output, not captured
        print(f"\nschemathesis: {requests_made} requests over {operations} operations")
    assert not failures, "\n\n".join(failures)
    assert operations >= 50, operations
    assert requests_made >= max(operations * len(keys) * len(SEEDS), REQUESTS_AT_LEAST)
