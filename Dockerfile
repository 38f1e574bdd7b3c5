# cortex-sync as a long-lived watcher (`cortex-sync watch`): see "Running as a watcher" in README.md.
# Build: docker build -t cortex-sync .
# Run (with your repository's URL): docker run -e CORTEX_API_KEY -p 8080:8080 cortex-sync watch --repo https://github.com/acme/catalog.git
# The image listens on every interface at 8080 through CORTEX_SYNC_LISTEN; change the address with
# that variable (-e CORTEX_SYNC_LISTEN=0.0.0.0:9090), not --listen, so that the HEALTHCHECK follows.

# Stage 1: install with the lockfile (this builds dist/, the CLI's bundle included, through
# `prepare`), then drop dev dependencies. The workspace packages (packages/: the emulator, the
# benchmark) are not copied: the image is the command alone.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts/build-cli.mjs scripts/build-packages.mjs ./scripts/
COPY bin ./bin
COPY src ./src
COPY schemas ./schemas
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Stage 2: the runtime, with git and ssh for the remote, running as an unprivileged user, under
# tini as PID 1: it forwards `docker stop`'s SIGTERM and reaps what git's helpers (ssh,
# git-remote-https) leave behind, which Node as PID 1 never would.
FROM node:24-bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/schemas ./schemas
RUN ln -s /app/bin/cortex-sync.js /usr/local/bin/cortex-sync \
    && mkdir -p /var/cache/cortex-sync \
    && chown 1000:1000 /var/cache/cortex-sync
ENV NODE_ENV=production \
    CORTEX_SYNC_CACHE_DIR=/var/cache/cortex-sync \
    CORTEX_SYNC_LISTEN=0.0.0.0:8080 \
    HOME=/var/cache/cortex-sync
# The image's `node` user (uid 1000); numeric so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080
# GET /healthz at the address CORTEX_SYNC_LISTEN names; it answers as soon as the port listens.
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
    CMD ["node", "/app/dist/watch/healthcheck-main.js"]
ENTRYPOINT ["/usr/bin/tini", "--", "cortex-sync"]
CMD ["watch"]
