"""Pagination of every list (docs/api.md): ``?page=N&page_size=M``, 50 by default, 500 at most;
the body is ``{"count", "next", "previous", "results"}``."""

from rest_framework.pagination import PageNumberPagination


class PageSizePagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_paginated_response_schema(self, schema: dict) -> dict:
        """The page envelope, each part described (the schema documents every field)."""
        envelope = super().get_paginated_response_schema(schema)
        descriptions = {
            "count": "rows matching the filters, over all pages [count]",
            "next": "URL of the next page; null on the last",
            "previous": "URL of the previous page; null on the first",
            "results": f"this page's rows, at most page_size (default {self.page_size}, "
            f"at most {self.max_page_size})",
        }
        for name, text in descriptions.items():
            envelope["properties"][name]["description"] = text
        return envelope
