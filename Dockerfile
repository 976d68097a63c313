# agentlanes server image. SQLite by default (data volume /data); PostgreSQL and Redis
# through AGENTLANES_DATABASE_URL / AGENTLANES_REDIS_URL. Secrets (the admin token, the
# database password) come from the environment at run time, never from the image.
#
# Pinned: the base image by exact version (add @sha256:<digest> from your registry for a
# byte-identical base; see docs/operations.md), every Python dependency by
# constraints.txt. Build once, run it as many times as needed:
#   docker build -t agentlanes:0.1.0 .
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    AGENTLANES_HOST=0.0.0.0 \
    AGENTLANES_PORT=8787 \
    AGENTLANES_DATABASE_URL=sqlite:////data/agentlanes.db

WORKDIR /app
COPY constraints.txt pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir -c constraints.txt . \
    && useradd --system --uid 10001 --home-dir /data agentlanes \
    && mkdir -p /data && chown agentlanes /data

USER agentlanes
VOLUME ["/data"]
EXPOSE 8787
# Probes the port the server listens on (AGENTLANES_PORT), not a fixed one.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import os,sys,urllib.request; port = os.environ.get('AGENTLANES_PORT', '8787'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/readyz', timeout=2).status == 200 else 1)"

# Applies pending migrations first (one process migrates, the others wait), then serves.
CMD ["agentlanes", "serve"]
