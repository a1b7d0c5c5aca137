"""Read-only links to a run (``/shared/<key>/``): made and revoked by the run's owner, expiring
after ``RUN_LINK_DAYS``, showing the run's figures, charts and downloads to anyone holding one and
nothing else (no quote vendor or reference, no link into the catalog or to another run)."""

import io
import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import timezone
from openpyxl import load_workbook

from accounts.roles import ADMIN, VIEWER
from costapp.models import RunLink, Scenario
from tests.factories import UserFactory

from ..runs_helpers import analyst, quoted_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def quoted(catalog):
    """A succeeded run of olive's (private) whose dedicated option prices a shipped quote."""
    run, quote = quoted_run(analyst("olive"))
    assert quote.vendor in json.dumps(run.result)  # the run itself names the vendor
    return run, quote


def link_for(client: Client, run) -> str:
    """Make a link as the signed-in owner; its path, from the page's one-time message."""
    page = client.post(f"/runs/{run.pk}/links/", follow=True).content.decode()
    found = re.search(r"http://testserver(/shared/[\w-]+/)", page)
    assert found, page
    return found[1]


def test_an_anonymous_holder_sees_the_run_and_its_downloads_and_nothing_else(client, quoted):
    run, quote = quoted
    client.force_login(run.scenario.owner)
    path = link_for(client, run)
    link = RunLink.objects.get()
    assert abs(link.expires - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    assert path.strip("/").split("/")[1] not in link.key_sha256  # only a hash is kept
    anonymous = Client()
    page = anonymous.get(path)
    assert page.status_code == 200 and page["X-Robots-Tag"] == "noindex, nofollow"
    html = page.content.decode()
    assert 'id="key-figures"' in html and 'id="figure-cumulative"' in html
    assert "leased" in html and 'id="sources-table"' in html and "a quote" in html
    assert quote.vendor not in html and quote.reference not in html
    hrefs = set(re.findall(r'(?:href|action|src|hx-get)="([^"]+)"', html))
    assert {h for h in hrefs if not h.startswith("/static/")} == {
        f"{path}monthly.csv",
        f"{path}run.xlsx",
        f"{path}result.json",
        f"{path}focus/",
    }
    csv_text = anonymous.get(f"{path}monthly.csv").content.decode()
    assert csv_text.startswith("option,month,compute,") and "leased" in csv_text
    result = json.loads(anonymous.get(f"{path}result.json").content)
    assert result["options"] == run.result["options"]
    assert quote.vendor not in json.dumps(result) and quote.reference not in json.dumps(result)
    book = load_workbook(io.BytesIO(anonymous.get(f"{path}run.xlsx").content))
    cells = " ".join(str(c.value) for sheet in book for row in sheet.iter_rows() for c in row)
    assert "leased" in cells and quote.vendor not in cells
    for number in range(1, len(run.result["options"]) + 1):
        focus = anonymous.get(f"{path}focus/", {"option": str(number)})
        assert focus.status_code == 200 and focus["X-Robots-Tag"] == "noindex, nofollow"
        focus_text = b"".join(focus.streaming_content).decode()
        assert quote.vendor not in focus_text and quote.reference not in focus_text
    # the link opens that run only: the site's own pages still ask to sign in
    for url in (f"/runs/{run.pk}/", f"/runs/{run.pk}/result.json", "/quotes/", "/"):
        assert anonymous.get(url).status_code == 302, url
    assert anonymous.get("/shared/not-a-key/").status_code == 404


def test_a_revoked_or_expired_link_opens_nothing(client, quoted):
    run, _ = quoted
    client.force_login(run.scenario.owner)
    revoked, expired = link_for(client, run), link_for(client, run)
    anonymous = Client()
    assert anonymous.get(revoked).status_code == anonymous.get(expired).status_code == 200
    first = RunLink.objects.order_by("id").first()
    assert f'id="revoke-link-{first.pk}"' in client.get(f"/runs/{run.pk}/").content.decode()
    client.post(f"/runs/{run.pk}/links/{first.pk}/revoke/")
    RunLink.objects.exclude(pk=first.pk).update(expires=timezone.now() - timedelta(seconds=1))
    for path in (revoked, expired):
        for tail in ("", "monthly.csv", "run.xlsx", "result.json", "focus/"):
            assert anonymous.get(path + tail).status_code == 404, path + tail
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="links-table"' not in html and 'id="link-button"' in html


@override_settings(RUN_LINK_LIFETIME=timedelta(days=2))
def test_only_the_owner_makes_or_revokes_a_link_and_its_lifetime_is_a_setting(client, quoted):
    run, _ = quoted
    client.force_login(run.scenario.owner)
    link_for(client, run)
    link = RunLink.objects.get()
    assert abs(link.expires - (timezone.now() + timedelta(days=2))) < timedelta(minutes=1)
    Scenario.objects.filter(pk=run.scenario_id).update(shared=True)
    for role in (VIEWER, ADMIN):
        client.force_login(UserFactory(roles=[role]))
        assert 'id="link-button"' not in client.get(f"/runs/{run.pk}/").content.decode()
        assert client.post(f"/runs/{run.pk}/links/").status_code == 403
        assert client.post(f"/runs/{run.pk}/links/{link.pk}/revoke/").status_code == 403
    client.force_login(analyst("bob"))
    assert client.post(f"/runs/{run.pk}/links/").status_code == 403
    Scenario.objects.filter(pk=run.scenario_id).update(shared=False)
    assert client.post(f"/runs/{run.pk}/links/").status_code == 404
    client.force_login(User.objects.create_user("nobody"))
    assert client.post(f"/runs/{run.pk}/links/").status_code == 403
    assert RunLink.objects.count() == 1 and RunLink.objects.get().revoked is None
