# secinv in a container: `docker build -t secinv .`, then
#   docker run -p 8080:8080 -v secinv-data:/data secinv                      # serve on SQLite in the volume
#   docker run --rm -v secinv-data:/data secinv tenants create --name acme    # any other command the same way
# With PostgreSQL: compose.yaml.

# Build: dependencies (better-sqlite3 compiled against this image's Node), the TypeScript build, the command line's
# bundle (scripts/bundle.ts) and the web console's (Vite), then the development dependencies dropped.
FROM node:20-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
COPY console ./console
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: the built package only, as the unprivileged user of the Node image.
FROM node:20-slim
ENV NODE_ENV=production \
    SECINV_HOST=0.0.0.0 \
    SECINV_PORT=8080 \
    SECINV_DATABASE_URL=sqlite:/data/secinv.db
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SECINV_PORT}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/secinv.js"]
CMD ["serve"]
