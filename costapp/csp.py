"""The Content-Security-Policy of every answer: scripts from the site alone (no inline script, no
``eval``), and every other kind of resource from the site too.

Styles allow ``'unsafe-inline'``: Plotly writes its chart styles into ``<style>`` elements and
``style`` attributes as it draws, htmx adds its indicator style, and Redoc (``/api/redoc/``) styles
itself the same way; a policy without it leaves the charts unstyled. Inline scripts stay blocked,
which is what the policy is for. ``data:`` images are the icons of Swagger UI's and the admin's
style sheets and Plotly's exported pictures; Redoc parses the schema in a ``blob:`` worker. The
Plotly figures travel as JSON in ``<script type="application/json">`` blocks, which are data, not
scripts: the policy does not apply to them.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

POLICY = {
    "default-src": ("'self'",),
    "script-src": ("'self'",),
    "style-src": ("'self'", "'unsafe-inline'"),
    "img-src": ("'self'", "data:"),
    "font-src": ("'self'", "data:"),
    "connect-src": ("'self'",),
    "worker-src": ("'self'", "blob:"),
    "object-src": ("'none'",),
    "base-uri": ("'self'",),
    "form-action": ("'self'",),
    "frame-ancestors": ("'none'",),
}
HEADER = "; ".join(f"{directive} {' '.join(sources)}" for directive, sources in POLICY.items())


class ContentSecurityPolicyMiddleware:
    """``Content-Security-Policy: HEADER`` on every answer that sets none of its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", HEADER)
        return response
