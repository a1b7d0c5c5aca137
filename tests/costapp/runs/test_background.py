"""The embedded default's background thread (``costapp.runs.background``): asking a question does
not wait for its run. The request saves the question and answers at once; the run and the
answer's step run after the commit in the web process's one background thread, which closes its
database connection when it is done (seen on PostgreSQL: SQLite keeps an in-memory database's
connection open, or the database would go with it); the answer page shows the progress, then the
answer."""

import logging
import threading
import time

import pytest
from django.db import connection

from costapp.ask.presets import EXAMPLE_QUESTION
from costapp.models import Question, SimulationRun
from costapp.runs.background import in_background
from tests.conftest import tasks_run_in_process

from ..runs_helpers import analyst


def test_work_runs_in_order_in_one_other_thread_and_an_error_is_logged(caplog):
    done: list[tuple[int, str]] = []

    def work(number: int) -> None:
        done.append((number, threading.current_thread().name))

    def fails() -> None:
        raise RuntimeError("this piece fails")

    with caplog.at_level(logging.ERROR, logger="costapp.runs.background"):
        pieces = [in_background(lambda n=n: work(n)) for n in range(3)]
        pieces.insert(1, in_background(fails))
        pieces.append(in_background(lambda: work(3)))
        for piece in pieces:
            piece.result(timeout=30)
    assert [number for number, _thread in done] == [0, 1, 2, 3]  # the failure stopped nothing
    threads = {thread for _number, thread in done}
    assert len(threads) == 1 and threads != {threading.current_thread().name}
    assert "this piece fails" in caplog.text


def _backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_default_a_question_is_saved_at_once_and_answered_in_the_background(
    client, catalog, settings, postgres_database
):
    settings.TASKS_IN_BACKGROUND = True  # as the product has it: the rows here are committed
    user = analyst("lead")
    client.force_login(user)
    before = _backends()
    with tasks_run_in_process():  # the embedded default: no broker, tasks in this process
        response = client.post("/ask/", EXAMPLE_QUESTION)
        assert response.status_code == 302, response.content.decode()[:2000]
        question = Question.objects.get(owner=user)
        run = question.run
        # the request answered before the run had finished: it did not wait for it
        assert run.status in (SimulationRun.Status.QUEUED, SimulationRun.Status.RUNNING)
        assert run.result is None and question.changes is None
        page = client.get(response["Location"]).content.decode()
        assert 'id="answer-progress"' in page and 'hx-trigger="every 1s"' in page
        # the answer page polled, as the browser polls it, until the answer is there
        deadline = time.monotonic() + 300
        while 'id="answer-sentence"' not in page or 'data-changes="pending"' in page:
            assert time.monotonic() < deadline, "no answer within 300 s"
            time.sleep(0.5)
            page = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    run.refresh_from_db()
    question.refresh_from_db()
    assert run.status == SimulationRun.Status.SUCCEEDED, run.error
    assert question.changes["run"] == run.pk and question.changes["moves"]
    # the background thread's connection closed once the work was done
    deadline = time.monotonic() + 30
    while _backends() > before:
        assert time.monotonic() < deadline, "the background thread kept its connection"
        time.sleep(0.2)


def _reading_then_writing(handler, number: int, done: list, errors: list, has_read=None) -> None:
    """In ``handler``'s connection of this thread: begin, read the table, (say so on
    ``has_read`` and give the other thread a second), write to it, commit; an error is kept."""
    connection = handler["default"]
    try:
        connection.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pieces")
            if has_read is not None:
                has_read.set()
                time.sleep(1.0)
            cursor.execute("INSERT INTO pieces VALUES (%s)", [number])
        connection.commit()
        done.append(number)
    except Exception as exc:
        errors.append(exc)
        connection.rollback()
    finally:
        connection.set_autocommit(True)
        connection.close()


@pytest.mark.parametrize("product", [True, False], ids=["the product's options", "without"])
def test_two_threads_reading_then_writing_the_embedded_default_sqlite_file_both_commit(
    tmp_path, settings, django_db_blocker, product
):
    """The web request and the background thread write to one SQLite file at once: with the
    product's options each waits its turn; without them, the one that read first and writes
    last finds the database locked."""
    from django.db.utils import ConnectionHandler

    options = dict(settings.SQLITE_OPTIONS) if product else {"timeout": 20}
    handler = ConnectionHandler(
        {
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": str(tmp_path / "db"),
                "OPTIONS": options,
            }
        }  # fmt: skip
    )
    done: list[int] = []
    errors: list[Exception] = []
    has_read = threading.Event()
    with django_db_blocker.unblock():
        with handler["default"].cursor() as cursor:
            cursor.execute("CREATE TABLE pieces (number integer)")
        handler["default"].close()
        first = threading.Thread(
            target=_reading_then_writing, args=(handler, 1, done, errors, has_read)
        )
        first.start()
        assert has_read.wait(timeout=30)
        second = threading.Thread(target=_reading_then_writing, args=(handler, 2, done, errors))
        second.start()
        first.join(timeout=60)
        second.join(timeout=60)
    if product:
        assert errors == [] and sorted(done) == [1, 2]
    else:
        assert [str(error) for error in errors] == ["database is locked"] and done == [2]
