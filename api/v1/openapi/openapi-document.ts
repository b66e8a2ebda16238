// The OpenAPI 3.1 document served at GET /v1/openapi.json. Request bodies
// are derived from the codecs the routes decode with; responses are described
// here, next to the route list the test compares with the router.
import { TenantDefaults, TenantUpdate, TenantUpdateQuery } from '../tenants/tenant-codecs.ts';
import { groupSchema } from '../tenants/settings-codecs.ts';
import { limitBounds, limitFields, retentionBounds, retentionFields } from '../../../src/tenant/settings/tenant-settings.ts';
import { LogQuery } from '../logs/log-codecs.ts';
import { TraceQuery, spanKinds, statusCodes } from '../traces/trace-codecs.ts';
import { UsageQuery } from '../usage/usage-codecs.ts';
import { SeriesQuery, TimeseriesRequest } from '../timeseries/timeseries-codecs.ts';
import { Pagination, Limit } from '../../http/pagination.ts';
import { errorStatus } from '../../http/api-error.ts';
import { severities } from '../query/filters.ts';
import { schemaOf } from './json-schema.ts';

const ref = (name: string): { $ref: string } => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown): { content: { 'application/json': { schema: unknown } } } => ({ content: { 'application/json': { schema } } });

const errorResponses = (...codes: (keyof typeof errorStatus)[]): Record<string, unknown> =>
  Object.fromEntries(codes.map((c) => [String(errorStatus[c]), { description: c, ...json(ref('Error')) }]));

const common = errorResponses(
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'unsupported_media_type',
  'payload_too_large',
  'internal',
  'unavailable',
);

/** Answers of a tenant's query routes to its limits (limits.maxConcurrentQueries, maxQueryDays, queryTimeoutSeconds). */
const tenantQueryLimits = {
  400: {
    description: 'invalid_request, also a time range longer than limits.maxQueryDays (measured after its start is moved up to the retention)',
    ...json(ref('Error')),
  },
  429: {
    description: 'rate_limited: the tenant (limits.maxConcurrentQueries) or the API key already has its most queries running; Retry-After says when to retry',
    ...json(ref('Error')),
  },
  503: { description: 'unavailable, also a query cancelled after limits.queryTimeoutSeconds', ...json(ref('Error')) },
};

/** Where each effective value came from, per field: first set wins in this order. */
const sourceEnum = {
  type: 'string',
  enum: ['tenant', 'api', 'stack', 'default'],
  description:
    "tenant: its Tenant resource (GitOps, pushed by the operator); api: PUT /v1/tenants/:id; stack: the ObservabilityStack's spec.tenantDefaults; default: the process defaults (TENANTRY_TENANT_*, TENANTRY_*_RETENTION_DAYS)",
};
const sourcesOf = (fields: readonly string[]): unknown => ({
  type: 'object',
  additionalProperties: false,
  required: [...fields],
  properties: Object.fromEntries(fields.map((f) => [f, sourceEnum])),
});
const effective = (bounds: Parameters<typeof groupSchema>[0], fields: readonly string[]): unknown => ({ ...groupSchema(bounds, false), required: [...fields] });

const tenantPath = {
  name: 'tenant_id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: "Tenant id. A tenant outside the key's list answers 404.",
};

const page = (item: string): unknown => ({
  type: 'object',
  required: ['data', 'nextPage', 'next_page'],
  properties: {
    data: { type: 'array', items: ref(item) },
    nextPage: { type: ['string', 'null'] },
    next_page: { type: ['string', 'null'], description: 'Same value as nextPage.' },
  },
});

const post = (summary: string, body: string, response: unknown): unknown => ({
  post: {
    summary,
    security: [{ bearer: [] }],
    parameters: [tenantPath],
    requestBody: { required: true, ...json(ref(body)) },
    responses: { 200: { description: 'OK', ...json(response) }, ...common, ...tenantQueryLimits },
  },
});

const counts = { type: 'object', properties: { units: { type: 'integer' } }, required: ['units'] };
const logCounts = { type: 'object', properties: { bytes: { type: 'integer' }, units: { type: 'integer' } }, required: ['bytes', 'units'] };
const rejectedCounts = {
  type: 'object',
  required: ['units', 'bytes', 'reasons'],
  properties: {
    units: { type: 'integer', description: 'Items the gateway refused (log records, data points, spans)' },
    bytes: { type: 'integer', description: "Decoded OTLP bytes of those items (each request's decoded size split by its items)" },
    reasons: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Units per reason, e.g. rate_limited (over limits.ingestBytesPerSecond), timestamp_too_old, tenant_not_allowed',
    },
  },
};
const rejectedUsage = {
  type: 'object',
  required: ['logs', 'metrics', 'traces'],
  properties: { logs: rejectedCounts, metrics: rejectedCounts, traces: rejectedCounts },
  description:
    'Units refused at ingest, beside the accepted ones; requests refused before their body was read (a key bound to one over-limit tenant) are not decoded and not counted here',
};
const attributes = { type: 'object', additionalProperties: { type: 'string' } };

/** The route table the document describes: method and Koa path of every /v1 route. */
export const documentedRoutes: readonly (readonly [string, string])[] = [
  ['GET', '/v1/openapi.json'],
  ['GET', '/v1/tenants'],
  ['GET', '/v1/tenants/:id'],
  ['PUT', '/v1/tenants/:id'],
  ['GET', '/v1/settings/tenant-defaults'],
  ['PUT', '/v1/settings/tenant-defaults'],
  ['POST', '/v1/tenants/:tenant_id/timeseries'],
  ['POST', '/v1/tenants/:tenant_id/logs'],
  ['POST', '/v1/tenants/:tenant_id/traces'],
  ['POST', '/v1/tenants/:tenant_id/usage'],
];

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Tenantry query API', version: '1.0.0', description: 'Per-tenant queries over OpenTelemetry logs, traces and metrics. See docs/api.md.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'requestId'],
              properties: {
                code: { type: 'string', enum: Object.keys(errorStatus) },
                message: { type: 'string' },
                details: { type: 'array', items: { type: 'string' } },
                requestId: { type: 'string' },
              },
            },
          },
        },
        Tenant: {
          type: 'object',
          required: ['id', 'name', 'limits', 'retention', 'sources'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            limits: { ...(effective(limitBounds, limitFields) as object), description: 'Effective limits' },
            retention: {
              ...(effective(retentionBounds, retentionFields) as object),
              description: 'Effective retention; rows older than this are never returned',
            },
            sources: {
              type: 'object',
              required: ['limits', 'retention'],
              description: 'Where each effective value came from, per field',
              properties: { limits: sourcesOf(limitFields), retention: sourcesOf(retentionFields) },
            },
          },
        },
        TenantPage: page('Tenant'),
        TenantUpdate: schemaOf(TenantUpdate),
        TenantDefaults: schemaOf(TenantDefaults),
        Pagination: schemaOf(Pagination),
        LogQuery: schemaOf(LogQuery),
        LogRecord: {
          type: 'object',
          required: ['timestamp', 'traceId', 'spanId', 'severity', 'serviceName', 'body', 'logId'],
          properties: {
            timestamp: { type: 'integer', description: 'Unix ms' },
            traceId: { type: 'string' },
            spanId: { type: 'string' },
            severity: { type: 'string', enum: severities },
            serviceName: { type: 'string' },
            body: { type: 'string' },
            logId: { type: 'string' },
            attributes,
          },
        },
        LogPage: page('LogRecord'),
        TraceQuery: schemaOf(TraceQuery),
        SpanRecord: {
          type: 'object',
          required: ['timestamp', 'traceId', 'spanId', 'parentSpanId', 'spanName', 'spanKind', 'serviceName', 'duration', 'statusCode', 'statusMessage'],
          properties: {
            timestamp: { type: 'integer' },
            traceId: { type: 'string' },
            spanId: { type: 'string' },
            parentSpanId: { type: 'string' },
            spanName: { type: 'string' },
            spanKind: { type: 'string', enum: spanKinds },
            serviceName: { type: 'string' },
            duration: { type: 'number', description: 'nanoseconds' },
            statusCode: { type: 'string', enum: statusCodes },
            statusMessage: { type: ['string', 'null'] },
            attributes,
          },
        },
        SpanPage: page('SpanRecord'),
        UsageQuery: schemaOf(UsageQuery),
        UsageResult: {
          type: 'object',
          required: ['logs', 'metrics', 'traces', 'rejected', 'data'],
          properties: {
            logs: logCounts,
            metrics: counts,
            traces: counts,
            rejected: rejectedUsage,
            data: {
              type: 'array',
              items: {
                type: 'object',
                required: ['start', 'end', 'logs', 'metrics', 'traces', 'rejected'],
                properties: {
                  start: { type: 'integer', description: 'Unix ms, inclusive' },
                  end: { type: 'integer', description: 'Unix ms, exclusive' },
                  logs: logCounts,
                  metrics: counts,
                  traces: counts,
                  rejected: rejectedUsage,
                },
              },
            },
          },
        },
        SeriesQuery: schemaOf(SeriesQuery),
        TimeseriesRequest: schemaOf(TimeseriesRequest),
        TimeseriesResult: {
          type: 'object',
          required: ['metadata', 'query', 'series', 'times'],
          properties: {
            times: { type: 'array', items: { type: 'number' }, description: 'Bucket starts, Unix ms' },
            series: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'suggested_label', 'unit', 'length', 'values', 'emptyBuckets', 'labels'],
                properties: {
                  name: { type: 'string' },
                  suggested_label: { type: 'string' },
                  unit: { type: 'object', required: ['name', 'short_name'], properties: { name: { type: 'string' }, short_name: { type: 'string' } } },
                  labels: attributes,
                  length: { type: 'integer' },
                  values: {
                    type: 'array',
                    items: { type: 'number' },
                    description: 'One value per time point; 0 where the bucket has no value (see emptyBuckets).',
                  },
                  emptyBuckets: {
                    type: 'array',
                    items: { type: 'integer', minimum: 0 },
                    description:
                      'Ascending indices of the time points whose bucket has no value for the operator (no data, a summary without the quantile, NaN or ±Inf); their values are 0. Never lists a count bucket.',
                  },
                },
              },
            },
            metadata: { type: 'array', items: { type: 'object' } },
            query: { type: 'object' },
          },
        },
      },
    },
    paths: {
      '/v1/openapi.json': { get: { summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1 document', ...json({ type: 'object' }) } } } },
      '/v1/tenants': {
        get: {
          summary: 'List the tenants of the key, sorted by id',
          security: [{ bearer: [] }],
          parameters: [
            { name: 'limit', in: 'query', schema: schemaOf(Limit) },
            { name: 'page', in: 'query', schema: { type: 'string' }, description: 'nextPage of the previous response' },
            { name: 'search', in: 'query', schema: { type: 'string' }, description: 'Case-insensitive substring of id or name' },
          ],
          responses: { 200: { description: 'OK', ...json(ref('TenantPage')) }, ...common },
        },
      },
      '/v1/tenants/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { summary: 'One tenant', security: [{ bearer: [] }], responses: { 200: { description: 'OK', ...json(ref('Tenant')) }, ...common } },
        put: {
          summary: 'Rename a tenant and set or unset its limits and retention (admin); creates the record for a valid unknown id',
          description:
            'name absent keeps the name. A number sets a field for source "api", null unsets it (the stack default or process default applies again), an absent field is left as it is. With source=tenant (the operator, for what a Tenant resource declares) limits and retention are the complete set of source "tenant": fields absent are unset. Unknown fields and values out of bounds are 400 naming the field and the bound. The change applies on this API replica at once and on every replica within TENANTRY_SETTINGS_REFRESH_SECONDS.',
          security: [{ bearer: [] }],
          parameters: [{ name: 'source', in: 'query', schema: schemaOf(TenantUpdateQuery.optional.source), description: 'api (default) or tenant' }],
          requestBody: {
            content: { 'application/json': { schema: ref('TenantUpdate') }, 'application/x-www-form-urlencoded': { schema: ref('TenantUpdate') } },
          },
          responses: { 200: { description: 'OK', ...json(ref('Tenant')) }, ...common },
        },
      },
      '/v1/settings/tenant-defaults': {
        get: {
          summary: "The stack's tenant defaults (admin for all tenants): only the fields they set",
          security: [{ bearer: [] }],
          responses: { 200: { description: 'OK', ...json(ref('TenantDefaults')) }, ...common },
        },
        put: {
          summary: "Replace the stack's tenant defaults (admin for all tenants; the operator pushes ObservabilityStack.spec.tenantDefaults here)",
          description:
            'The body is the complete set: fields absent or null are unset. They apply to every tenant for the fields neither its Tenant resource nor the API sets.',
          security: [{ bearer: [] }],
          requestBody: { required: true, ...json(ref('TenantDefaults')) },
          responses: { 200: { description: 'OK', ...json(ref('TenantDefaults')) }, ...common },
        },
      },
      '/v1/tenants/{tenant_id}/timeseries': post('Metric timeseries', 'TimeseriesRequest', ref('TimeseriesResult')),
      '/v1/tenants/{tenant_id}/logs': post('Log records, newest first', 'LogQuery', ref('LogPage')),
      '/v1/tenants/{tenant_id}/traces': post('Spans, newest first', 'TraceQuery', ref('SpanPage')),
      '/v1/tenants/{tenant_id}/usage': post('Usage per UTC day or month', 'UsageQuery', ref('UsageResult')),
    },
  };
}
