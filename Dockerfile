# syntax=docker/dockerfile:1
# One image for every target: `tenantry <target>` (operator, gateway, api,
# migrate, drain, all). Production dependencies only: no chdb (embedded ClickHouse is
# for laptops and tests), no dev tools, no Node from npm (the base image has 24).

FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The `node` devDependency only brings Node 24 to machines that lack it.
RUN npm pkg delete devDependencies.node scripts.prepare \
 && npm install --no-audit --no-fund --omit=optional
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY src ./src
COPY gateway ./gateway
COPY api ./api
COPY operator ./operator
RUN npm run proto \
 && npm run build \
 && mkdir -p dist/proto \
 && cp -r proto/gen dist/proto/gen

FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# chdb is left out by name, not with --omit=optional: native packages other
# dependencies bring as optional ones (snappy's, for remote write) must stay.
RUN npm pkg delete devDependencies.node optionalDependencies.chdb scripts.prepare \
 && npm install --no-audit --no-fund --omit=dev --ignore-scripts \
 && npm cache clean --force
COPY --from=build /src/dist ./dist
RUN chmod +x dist/src/cli.js && ln -s /app/dist/src/cli.js /usr/local/bin/tenantry
# The image's `node` user (uid 1000); nothing under /app is written at run time,
# so the root filesystem can be read-only.
USER 1000:1000
EXPOSE 4318 4317 8080 8081
ENTRYPOINT ["tenantry"]
CMD ["--help"]
