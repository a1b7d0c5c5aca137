"""Template filters of the token prices and assumptions pages."""

import re

from django import template

register = template.Library()

SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]*://", re.I)


@register.filter
def address_as_text(value: str) -> str:
    """A source's text with every web address's scheme dropped (``fireworks.ai/pricing``): the
    page names the address but never links to or loads another site."""
    return SCHEME.sub("", value or "")
