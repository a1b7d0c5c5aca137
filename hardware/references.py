"""What refers to a catalog slug from outside the catalog (a saved scenario's document names
providers and GPU models by slug), so a rename never leaves those references pointing at nothing.

The catalog cannot look outside itself (``hardware`` never imports ``costapp``): the apps that
hold references register a checker here when they start (``costapp.catalog_references``). A
checker takes the model and a slug and answers the references it holds, in words, with a count.
The API refuses such a rename with a 400 on ``slug``, the admin with a form error.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.db.models import Model


@dataclass(frozen=True)
class References:
    """References one checker found: ``count`` of ``what`` (singular: ``"saved scenario"``),
    with ``ids`` to look them up by."""

    what: str
    count: int
    ids: tuple[int, ...]

    def __str__(self) -> str:
        shown = ", ".join(str(i) for i in self.ids[:10])
        more = f" and {self.count - 10} more" if self.count > 10 else ""
        many = "s" if self.count != 1 else ""
        return (
            f"{self.count} {self.what}{many} (id{'s' if len(self.ids) != 1 else ''} {shown}{more})"
        )


Checker = Callable[[type[Model], str], References | None]
_checkers: list[Checker] = []


def checker_register(checker: Checker) -> None:
    """Add ``checker`` (once) to those asked before a slug is renamed."""
    if checker not in _checkers:
        _checkers.append(checker)


def slug_references(model: type[Model], slug: str) -> list[References]:
    """What every registered checker finds referring to ``model``'s ``slug``."""
    found = (checker(model, slug) for checker in _checkers)
    return [references for references in found if references is not None and references.count]


def slug_rename_refusal(instance: Model, new_slug: Any) -> str | None:
    """Why ``instance`` (a stored row with a ``slug``) may not take ``new_slug``; ``None`` when
    nothing refers to its current slug, or the slug does not change."""
    if instance.pk is None or not isinstance(new_slug, str):
        return None
    model = type(instance)
    old = model._default_manager.filter(pk=instance.pk).values_list("slug", flat=True).first()
    if old is None or old == new_slug:
        return None
    references = slug_references(model, old)
    if not references:
        return None
    held = "; ".join(str(found) for found in references)
    return (
        f'"{old}" is referred to by {held}: renaming it to "{new_slug}" would leave them'
        f" naming a {model._meta.verbose_name} that does not exist. Change them first, or"
        " keep the slug."
    )


class SlugRenameCheckedForm(forms.ModelForm):
    """An admin form whose ``slug`` cannot be renamed while something refers to the old one."""

    def clean_slug(self) -> Any:
        slug = self.cleaned_data.get("slug")
        refusal = slug_rename_refusal(self.instance, slug)
        if refusal is not None:
            raise forms.ValidationError(refusal, code="slug_referenced")
        return slug
