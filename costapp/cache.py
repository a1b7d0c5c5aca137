"""Django's Redis cache backend, keeping one ``redis.Redis`` client per server.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` around the shared connection pool for
every cache call. With redis-py 5 and later that construction fills the client's table of response
callbacks (about a hundred and fifty entries) each time: some 0.3 ms of CPU per call, and the API
makes up to three cache calls a request (throttle read and write, page cache). A client is safe to
share between threads (connections come from its pool), so one per server is kept instead; all
else is Django's.
"""

from collections.abc import Callable
from typing import Any

from django.core.cache.backends import redis as django_redis


class RedisCacheClient(django_redis.RedisCacheClient):
    """``RedisCacheClient`` with one client per server instead of one per call."""

    # Django's private attributes used below (declared for type checking; its stubs omit them).
    _get_connection_pool_index: Callable[[bool], int]
    _pools: dict[int, Any]
    _pool_class: Any
    _pool_options: dict[str, Any]
    _servers: list[str]
    _client: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            if index not in self._pools:
                self._pools[index] = self._pool_class.from_url(
                    self._servers[index], **self._pool_options
                )
            client = self._clients[index] = self._client(connection_pool=self._pools[index])
        return client


class RedisCache(django_redis.RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` with :class:`RedisCacheClient`."""

    _cache: RedisCacheClient  # Django's cached client (private: its stubs omit it)

    def __init__(self, server: Any, params: dict) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    def redis_client(self) -> Any:
        """The ``redis.Redis`` client writes go through (for commands the cache API lacks, such
        as the throttle's script, ``accounts.throttling``)."""
        return self._cache.get_client(write=True)
