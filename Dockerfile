# Switchyard worker image: the built package (dist/, see `npm run build`) run with plain node.
# Used by docker-compose.yml; see the header there.
FROM node:20.19-bookworm-slim AS build

WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts/ ./scripts/
COPY src/ ./src/
# `npm ci` runs `prepare`, which builds dist/ (and dist/workflow-bundle.js); then drop the dev dependencies.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev && npm cache clean --force

FROM node:20.19-bookworm-slim

WORKDIR /app

COPY package.json package-lock.json ./
COPY --from=build /app/node_modules/ ./node_modules/
COPY --from=build /app/dist/ ./dist/
COPY bin/ ./bin/

# Default working directory of sessions (`--cwd /workspace` in docker-compose.yml); owned by the
# unprivileged user so a named volume mounted here starts out writable.
RUN mkdir -p /workspace && chown node:node /workspace

ENV NODE_ENV=production
USER node

ENTRYPOINT ["node", "bin/switchyard.js"]
CMD ["worker"]
