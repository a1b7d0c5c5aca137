"""Ask's speed: ``uv run python bench/ask.py [--repeat N]``.

Sets up a throwaway SQLite database in a temporary folder (migrate, ``load_catalog``), signs in
an analyst with Django's test client, and asks the three questions of a finance lead
(``costapp.ask.presets.LEAD_QUESTIONS``) through ``POST /ask/`` on the embedded default (no broker
configured: the run's units, its merge and the answer's step, the plan sized and "what would
change", run in this process's background thread once the POST has answered). Measures, for
each question:

- from the POST to the finished answer (the run succeeded and its step kept on the question), wall
  time, the median of ``N`` questions;
- the answer page once finished: the median of ``N`` views (at least 5) after the first.

Targets: each question under 10 s; the answer page under 300 ms. Each figure is printed with its
target, met or missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costapp.ask.presets import LEAD_QUESTIONS  # noqa: E402

QUESTION_TARGET_S = 10.0
PAGE_TARGET_MS = 300.0


def _verdict(value: float, target: float) -> str:
    return "met" if value < target else "MISSED"


def _ask(client: object, data: dict) -> tuple[float, object]:
    from costapp.models import Question

    wall = time.perf_counter()
    response = client.post("/ask/", data)  # type: ignore[attr-defined]
    if response.status_code != 302:
        raise SystemExit(f"the question was refused: {response.status_code}")
    question = Question.objects.order_by("-pk").first()
    assert question is not None
    while True:  # the POST answered at once; the run and its step go on in the background
        question.refresh_from_db()
        run = question.run
        assert run is not None
        run.refresh_from_db()
        done = (question.changes or {}).get("run") == run.pk
        if run.status in ("failed", "cancelled"):
            raise SystemExit(f"the question did not finish: {run.error}")
        if run.status == "succeeded" and done:
            break
        time.sleep(0.05)
    return time.perf_counter() - wall, question


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="questions asked of each")
    args = parser.parse_args()
    from bench.throwaway import throwaway_django

    throwaway_django("gpu-tco-bench-ask-")
    import logging

    logging.disable(logging.INFO)
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    user = get_user_model().objects.create_user("bench-analyst")
    user.groups.add(Group.objects.get(name="analyst"))
    client = Client()
    client.force_login(user)

    for title, data in LEAD_QUESTIONS.items():
        walls, question = [], None
        for _ in range(args.repeat):
            wall, question = _ask(client, data)
            walls.append(wall)
        assert question is not None
        url = f"/ask/{question.pk}/"  # type: ignore[attr-defined]
        first = client.get(url)
        if b'id="answer-sentence"' not in first.content:
            raise SystemExit(f"{url} has no answer sentence")
        pages = []
        for _ in range(max(args.repeat, 5)):
            start = time.perf_counter()
            if client.get(url).status_code != 200:
                raise SystemExit(f"{url} did not answer 200")
            pages.append(time.perf_counter() - start)
        result = question.run.result  # type: ignore[attr-defined]
        wall, page = statistics.median(walls), statistics.median(pages) * 1000
        print(f"{title}: {len(result['options'])} options, {len(result.get('sizing') or [])} "
              f"sizings, {result['simulation']['paths']:,} paths")  # fmt: skip
        print(f"  POST to finished answer: {wall:.2f} s (median of {args.repeat}); target < "
              f"{QUESTION_TARGET_S:g} s: {_verdict(wall, QUESTION_TARGET_S)}")  # fmt: skip
        print(f"  answer page once finished: {page:.1f} ms (median of {len(pages)}); target < "
              f"{PAGE_TARGET_MS:g} ms: {_verdict(page, PAGE_TARGET_MS)}")  # fmt: skip


if __name__ == "__main__":
    main()
