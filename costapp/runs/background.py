"""The embedded default's background thread.

With no broker configured, a task runs in the process that publishes it, as it is published, so a
request that starts a run would wait for all of it. Work a request should not wait for (a
question's run, and the answer's step after it) is handed instead, once the request's transaction
has committed, to the process's one background thread: it does each piece in turn, in the order
given, and closes its own database connections after each (a connection belongs to its thread;
nothing else would close this one). With a broker the work goes to the workers as always and no
thread is started.

A process that exits normally first finishes what it was handed; one killed while a piece runs
leaves that run unfinished (the embedded default has no beat to requeue it).
"""

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import connections

logger = logging.getLogger(__name__)

_EXECUTOR: list[ThreadPoolExecutor] = []
"""The process's background thread, started by the first piece of work handed to it."""
_STARTING = threading.Lock()


def _done_closing(work: Callable[[], None]) -> None:
    try:
        work()
    except Exception:
        logger.exception("work in the background thread failed")
    finally:
        connections.close_all()


def in_background(work: Callable[[], None]) -> "Future[None]":
    """Do ``work`` in the process's background thread, after what was handed to it before; its
    error is logged, and the thread's database connections are closed once it has ended."""
    with _STARTING:
        if not _EXECUTOR:
            _EXECUTOR.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="background"))
        return _EXECUTOR[0].submit(_done_closing, work)
