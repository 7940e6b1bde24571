# syntax=docker/dockerfile:1
# Two images from one build, the same code in both, different entry points:
#   podman build --target api -t appaudit-api .        (or docker build)
#   podman build --target crawler -t appaudit-crawler .
# Bases are pinned public images; the final stages hold no compiler, npm or package cache, run as an
# unprivileged user (uid 10001) and write only to /tmp (the root filesystem may be read-only).

ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG BUN_VERSION=1.4.5

# ---- build: bun from npm, the production dependencies ----
FROM ${DEBIAN_IMAGE} AS build
ARG BUN_VERSION
# Behind an intercepting proxy, its CA (PEM, base64) for npm and bun: build stage only, never in the images.
ARG EXTRA_CA_B64=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && if [ -n "$EXTRA_CA_B64" ]; then echo "$EXTRA_CA_B64" | base64 -d > /usr/local/share/ca-certificates/extra.crt && update-ca-certificates; fi
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# bun's own install script links the platform's binary; the folder's package.json allows it.
RUN mkdir -p /opt/bun \
 && echo '{"private": true, "allowScripts": {"bun": true}}' > /opt/bun/package.json \
 && npm install --prefix /opt/bun --no-audit --no-fund "bun@${BUN_VERSION}" \
 && cp "$(readlink -f /opt/bun/node_modules/bun/bin/bun.exe)" /usr/local/bin/bun \
 && /usr/local/bin/bun --version
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production --ignore-scripts
COPY tsconfig.json ./
COPY api ./api
COPY crawler ./crawler
COPY shared ./shared
COPY server ./server
COPY docs ./docs

# ---- what both images share: bun, the code, the user ----
FROM ${DEBIAN_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --gid 0 --home-dir /tmp --no-create-home appaudit
COPY --from=build /usr/local/bin/bun /usr/local/bin/bun
COPY --from=build /app /app
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    HEALTH_HOST=0.0.0.0 \
    DATA_DIR=/tmp/appaudit \
    TMPDIR=/tmp

# ---- api: the HTTP surface (git for create_patch's pushes) ----
FROM runtime AS api
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*
USER 10001
ENV ROLE=api PORT=8787
EXPOSE 8787
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bun", "server/main.ts"]

# ---- crawler: the workers and Debian's Chromium (its headless shell) with fonts ----
FROM runtime AS crawler
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell fonts-liberation fonts-noto-core fonts-noto-color-emoji \
 && rm -rf /var/lib/apt/lists/*
USER 10001
ENV ROLE=crawler HEALTH_PORT=8788 CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell
EXPOSE 8788
# tini reaps Chromium's helper processes and passes SIGTERM on, so the crawler hands its work back.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bun", "server/crawler.ts"]
