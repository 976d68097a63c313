# agentlanes server image. SQLite by default (data volume /data); PostgreSQL and Redis
# through AGENTLANES_DATABASE_URL / AGENTLANES_REDIS_URL.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    AGENTLANES_HOST=0.0.0.0 \
    AGENTLANES_PORT=8787 \
    AGENTLANES_DATABASE_URL=sqlite:////data/agentlanes.db

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . \
    && useradd --system --uid 10001 --home-dir /data agentlanes \
    && mkdir -p /data && chown agentlanes /data

USER agentlanes
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8787/readyz', timeout=2).status == 200 else 1)"

CMD ["agentlanes", "serve"]
