#!/bin/sh
# Generates proto/gen/otlp.js (static protobufjs module) and its types from
# the pinned .proto files. Called by `npm run proto`.
set -eu
cd "$(dirname "$0")/.."
mkdir -p proto/gen
FILES="proto/opentelemetry/proto/collector/trace/v1/trace_service.proto
proto/opentelemetry/proto/collector/logs/v1/logs_service.proto
proto/opentelemetry/proto/collector/metrics/v1/metrics_service.proto
proto/google/rpc/status.proto
proto/google/rpc/error_details.proto"
# shellcheck disable=SC2086
pbjs -t static-module -w es6 --no-verify --no-delimited --no-service -p proto -o proto/gen/otlp.js $FILES
pbts --no-comments -o proto/gen/otlp.d.ts proto/gen/otlp.js
