# syntax=docker/dockerfile:1
# Build stage: compiles the native addons (better-sqlite3, secp256k1) and type-checks the sources.
FROM node:20-bookworm AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# The anvil binary is an optional dependency for tests only; it stays out of the image
# (--omit=optional would also drop esbuild's platform binary, which tsx needs at run time).
RUN npm run typecheck && npm prune --omit=dev && rm -rf node_modules/@foundry-rs

# Runtime stage: no compiler, no dev dependencies, a non-root user.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    COUNTERSIGN_DATA_DIR=/data \
    COUNTERSIGN_GRPC_LISTEN=127.0.0.1:50051 \
    COUNTERSIGN_API_LISTEN=0.0.0.0:8080 \
    COUNTERSIGN_PROXY_LISTEN=0.0.0.0:8081
RUN groupadd --system countersign && useradd --system --gid countersign --home /app countersign \
    && mkdir -p /data && chown countersign:countersign /data
COPY --from=build --chown=countersign:countersign /app/node_modules ./node_modules
COPY --from=build --chown=countersign:countersign /app/package.json ./
COPY --from=build --chown=countersign:countersign /app/bin ./bin
COPY --from=build --chown=countersign:countersign /app/src ./src
COPY --from=build --chown=countersign:countersign /app/chains ./chains
COPY --from=build --chown=countersign:countersign /app/proto ./proto
COPY --from=build --chown=countersign:countersign /app/contracts/build ./contracts/build
COPY --from=build --chown=countersign:countersign /app/console/dist ./console/dist
USER countersign
VOLUME ["/data"]
EXPOSE 50051 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/countersign.js"]
CMD ["serve"]
