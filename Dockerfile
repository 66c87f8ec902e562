# syntax=docker/dockerfile:1
# Build stage: compiles the native addons (better-sqlite3, secp256k1), type-checks and compiles the
# TypeScript to JavaScript, then drops everything the runtime does not need.
FROM node:22-bookworm AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# `npm run build` type-checks as it compiles (tsconfig.build.json emits dist/src and dist/chains).
# Pruning dev AND optional dependencies: typescript is kept by --omit=dev alone (it is an optional
# peer of a runtime dependency), and the optional anvil binary is for tests only.
RUN npm run build && npm prune --omit=dev --omit=optional \
    && test ! -e node_modules/typescript && test ! -e node_modules/tsx && test ! -e node_modules/esbuild

# Runtime stage: Node 22 LTS, no compiler, no dev dependencies, a non-root user.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    COUNTERSIGN_DATA_DIR=/data \
    COUNTERSIGN_GRPC_LISTEN=127.0.0.1:50051 \
    COUNTERSIGN_API_LISTEN=0.0.0.0:8080 \
    COUNTERSIGN_PROXY_LISTEN=0.0.0.0:8081
# jemalloc as the C allocator (node's C++ objects, OpenSSL, SQLite, the native addons): at 64
# signing calls in flight the server spends 5-7% less CPU a call than under glibc's malloc
# (bench/PROFILE.md, stop 46). `-e LD_PRELOAD=` runs the image with glibc's.
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2 \
    && test -e /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
RUN groupadd --system countersign && useradd --system --gid countersign --home /app countersign \
    && mkdir -p /data && chown countersign:countersign /data
# Code and dependencies belong to root (read-only to the service user); only /data is writable.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
COPY --from=build /app/console/dist ./console/dist
USER countersign
VOLUME ["/data"]
EXPOSE 50051 8080 8081
# gRPC health, which every mode serves (remote mode opens no HTTP listener).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "bin/healthcheck.js"]
ENTRYPOINT ["node", "bin/countersign.js"]
CMD ["serve"]
