"""The glossary: every word the pages explain on hover has one line of meaning, listed on
/glossary/ for every role, and each word a template asks for exists."""

import re
from pathlib import Path

import pytest

from costapp.reports.glossary import BY_SLUG, TERMS
from tests.costapp.runs_helpers import analyst

TEMPLATES = Path(__file__).resolve().parents[3] / "templates"


def test_every_term_has_one_line_of_meaning_and_a_unique_anchor():
    assert len(BY_SLUG) == len(TERMS)
    for term in TERMS:
        assert term.meaning.endswith(".") and "\n" not in term.meaning, term.slug
        assert len(term.meaning) < 240, term.slug  # one line, not a paragraph


def test_every_word_a_template_explains_is_in_the_glossary():
    asked = set()
    for path in TEMPLATES.rglob("*.html"):
        asked |= set(re.findall(r"'([a-z0-9-]+)'\|meaning", path.read_text(encoding="utf-8")))
    assert asked, "the pages explain no word on hover"
    assert asked <= set(BY_SLUG), asked - set(BY_SLUG)


@pytest.mark.django_db
def test_the_glossary_page_lists_every_term(client):
    client.force_login(analyst("gil"))
    html = client.get("/glossary/").content.decode()
    for term in TERMS:
        assert f'id="{term.slug}"' in html and term.meaning.replace("'", "&#x27;") in html
