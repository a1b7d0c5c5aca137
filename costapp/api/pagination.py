"""Pagination of every list (docs/api.md): ``?page=N&page_size=M``, 50 by default, 500 at most;
the body is ``{"count", "next", "previous", "results"}``."""

from rest_framework.pagination import PageNumberPagination


class PageSizePagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
