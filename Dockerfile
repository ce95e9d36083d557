# Switchyard worker image. No build step: bin/switchyard.js runs the TypeScript sources through tsx,
# which is a runtime dependency. Used by docker-compose.yml; see the header there.
FROM node:20.19-bookworm-slim

WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY bin/ ./bin/
COPY src/ ./src/

# Default working directory of sessions (`--cwd /workspace` in docker-compose.yml); owned by the
# unprivileged user so a named volume mounted here starts out writable.
RUN mkdir -p /workspace && chown node:node /workspace

ENV NODE_ENV=production
USER node

ENTRYPOINT ["node", "bin/switchyard.js"]
CMD ["worker"]
