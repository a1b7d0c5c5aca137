"""Scripts are served from static/: plotly.js is the one bundled with the installed plotly."""

import hashlib
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parents[2]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_plotly_js_in_static_is_the_installed_plotly_packages_own():
    bundled = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert digest(ROOT / "static" / "vendor" / "plotly.min.js") == digest(bundled)


def test_htmx_is_version_2_and_the_versions_are_recorded():
    assert b'version:"2.0.11"' in (ROOT / "static" / "vendor" / "htmx.min.js").read_bytes()
    readme = (ROOT / "static" / "vendor" / "README.md").read_text()
    assert "2.0.11" in readme and "0BSD" in readme and "MIT" in readme


def test_favicon_ico_leads_to_the_sites_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    assert client.get(response["Location"]).status_code == 200
