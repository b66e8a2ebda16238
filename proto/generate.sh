#!/bin/sh
# Generates proto/gen/otlp.js (static protobufjs module) and its types from
# the pinned .proto files. Called by `npm run proto` (and so by prepare,
# pretest and prestart).
set -eu
cd "$(dirname "$0")/.."
if ! command -v pbjs >/dev/null 2>&1; then
  # protobufjs-cli is a devDependency: an install without it (--omit=dev) keeps what was generated.
  if [ -f proto/gen/otlp.js ]; then echo "proto: pbjs not installed; keeping proto/gen" >&2; exit 0; fi
  echo "proto: pbjs (devDependency protobufjs-cli) is needed to generate proto/gen; run npm install with dev dependencies" >&2
  exit 1
fi
mkdir -p proto/gen
FILES="proto/opentelemetry/proto/collector/trace/v1/trace_service.proto
proto/opentelemetry/proto/collector/logs/v1/logs_service.proto
proto/opentelemetry/proto/collector/metrics/v1/metrics_service.proto
proto/google/rpc/status.proto
proto/google/rpc/error_details.proto"
# shellcheck disable=SC2086
pbjs -t static-module -w es6 --no-verify --no-delimited --no-service -p proto -o proto/gen/otlp.js $FILES
pbts --no-comments -o proto/gen/otlp.d.ts proto/gen/otlp.js
