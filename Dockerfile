# One image for web, worker and beat.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    PATH="/app/.venv/bin:$PATH"

RUN pip install --no-cache-dir uv \
    && useradd --create-home --uid 1000 app

WORKDIR /app
COPY pyproject.toml uv.lock ./
RUN uv sync --frozen --no-dev --no-install-project

COPY . .
# collectstatic needs settings; a build-time key that is never used at run time.
RUN SECRET_KEY=collectstatic-only STATIC_MANIFEST=true python manage.py collectstatic --noinput \
    && chown -R app:app /app
USER app

EXPOSE 8000
CMD ["gunicorn", "costapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
