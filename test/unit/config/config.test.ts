import { resolve } from 'node:path';
import { expect } from 'chai';
import { decodeConfig } from '../../../src/config/config.ts';
import type { Config } from '../../../src/config/config.ts';
import { detectedMemoryBytes } from '../../../src/config/memory-limit.ts';
import { allVariables } from '../../../src/config/variables.ts';

function ok(target: string, settings: Record<string, string> = {}): Config {
  const result = decodeConfig(target, settings);
  if (!result.ok) throw new Error(result.error.join('\n'));
  return result.value;
}

function errors(target: string, settings: Record<string, string>): readonly string[] {
  const result = decodeConfig(target, settings);
  if (result.ok) throw new Error(`expected ${JSON.stringify(settings)} to be rejected`);
  return result.error;
}

const server = { TENANTRY_CLICKHOUSE_URL: 'http://clickhouse:8123' };

describe('config decoding', () => {
  it('gives every documented default for target all', () => {
    const config = ok('all');
    if (config.target !== 'all') throw new Error('wrong target');
    expect(config.host).to.equal('0.0.0.0');
    expect(config.logLevel).to.equal('info');
    expect(config.gateway).to.deep.equal({
      otlpHttpPort: 4318,
      otlpGrpcPort: 4317,
      maxRequestBytes: 16 * 1024 * 1024,
      writer: config.gateway.writer,
      listener: { maxConnections: undefined, headersTimeoutMs: 10_000, bodyTimeoutMs: 30_000 },
      maxInflightBytes: 256 * 1024 * 1024,
      metricsTenantLabels: false,
      items: {
        maxAttributes: 128,
        maxAttributeKeyBytes: 1024,
        maxAttributeValueBytes: 16 * 1024,
        maxLogBodyBytes: 256 * 1024,
        maxSpanNameBytes: 1024,
        maxSpanEvents: 128,
        maxSpanLinks: 128,
        maxValueDepth: 16,
        maxFutureSkewMs: 600_000,
        maxRequestExpansion: 16,
        retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 },
      },
    });
    expect(config.api).to.deep.equal({ port: 8080, queryTimeoutMs: 30_000, pageMaxBytes: 8 * 1_048_576, listener: config.gateway.listener });
    expect(config.storage.clickhouse).to.deep.equal({ kind: 'embedded', dataDir: './data', database: 'tenantry' });
    expect(config.storage.retention).to.deep.equal({ logsDays: 30, tracesDays: 30, metricsDays: 90 });
    expect(config.keys).to.deep.equal({ json: undefined, file: undefined });
    expect(config.queries).to.deep.equal({ maxConcurrentQueries: 8, embeddedTimeoutMs: 10_000, memoryLimitBytes: detectedMemoryBytes() });
  });

  it('takes the memory limit from TENANTRY_MEMORY_LIMIT_BYTES when set', () => {
    const config = ok('all', { TENANTRY_MEMORY_LIMIT_BYTES: '2GiB' });
    if (config.target !== 'all') throw new Error('target');
    expect(config.queries.memoryLimitBytes).to.equal(2 * 1024 ** 3);
  });

  it('decodes a value for every variable', () => {
    const config = ok('all', {
      TENANTRY_LOG_LEVEL: 'debug',
      TENANTRY_HOST: '127.0.0.1',
      TENANTRY_DATA_DIR: '/var/lib/tenantry',
      TENANTRY_CLICKHOUSE_DATABASE: 'obs_2',
      TENANTRY_LOGS_RETENTION_DAYS: '7',
      TENANTRY_TRACES_RETENTION_DAYS: '14',
      TENANTRY_METRICS_RETENTION_DAYS: '400',
      TENANTRY_API_KEYS: '[]',
      TENANTRY_OTLP_HTTP_PORT: '0',
      TENANTRY_OTLP_GRPC_PORT: '14317',
      TENANTRY_MAX_REQUEST_BYTES: '512KiB',
      TENANTRY_BATCH_MAX_ROWS: '1000',
      TENANTRY_BATCH_MAX_BYTES: '1MB',
      TENANTRY_BATCH_MAX_DELAY_MS: '0',
      TENANTRY_WAL_MAX_BYTES: '64MiB',
      TENANTRY_WAL_DIR: '/var/lib/tenantry-wal',
      TENANTRY_WAL_SYNC: 'fsync',
      TENANTRY_API_PORT: '9090',
      TENANTRY_QUERY_TIMEOUT_SECONDS: '5',
      TENANTRY_API_PAGE_MAX_BYTES: '2MiB',
      TENANTRY_MAX_CONNECTIONS: '500',
      TENANTRY_HEADERS_TIMEOUT_MS: '2000',
      TENANTRY_BODY_TIMEOUT_MS: '5000',
      TENANTRY_MAX_INFLIGHT_BYTES: '64MiB',
      TENANTRY_METRICS_KEY: 'scrape-key',
      TENANTRY_METRICS_TENANT_LABELS: 'on',
      TENANTRY_MAX_ATTRIBUTES: '64',
      TENANTRY_MAX_ATTRIBUTE_KEY_BYTES: '256',
      TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES: '2KiB',
      TENANTRY_MAX_LOG_BODY_BYTES: '1MiB',
      TENANTRY_MAX_SPAN_NAME_BYTES: '512',
      TENANTRY_MAX_SPAN_EVENTS: '10',
      TENANTRY_MAX_SPAN_LINKS: '0',
      TENANTRY_MAX_VALUE_DEPTH: '4',
      TENANTRY_MAX_FUTURE_SKEW_SECONDS: '60',
      TENANTRY_MAX_REQUEST_EXPANSION: '8',
    });
    if (config.target !== 'all') throw new Error('wrong target');
    expect(config.logLevel).to.equal('debug');
    expect(config.host).to.equal('127.0.0.1');
    expect(config.storage.clickhouse).to.deep.equal({ kind: 'embedded', dataDir: '/var/lib/tenantry', database: 'obs_2' });
    expect(config.storage.retention).to.deep.equal({ logsDays: 7, tracesDays: 14, metricsDays: 400 });
    expect(config.keys.json).to.equal('[]');
    expect(config.gateway).to.deep.equal({
      otlpHttpPort: 0,
      otlpGrpcPort: 14317,
      maxRequestBytes: 512 * 1024,
      writer: {
        maxBatchRows: 1000,
        maxBatchBytes: 1_000_000,
        maxBatchDelayMs: 0,
        maxLogBytes: 64 * 1024 * 1024,
        logDir: '/var/lib/tenantry-wal',
        logSync: 'fsync',
      },
      listener: { maxConnections: 500, headersTimeoutMs: 2000, bodyTimeoutMs: 5000, metricsKey: 'scrape-key' },
      maxInflightBytes: 64 * 1024 * 1024,
      metricsTenantLabels: true,
      items: {
        maxAttributes: 64,
        maxAttributeKeyBytes: 256,
        maxAttributeValueBytes: 2048,
        maxLogBodyBytes: 1024 * 1024,
        maxSpanNameBytes: 512,
        maxSpanEvents: 10,
        maxSpanLinks: 0,
        maxValueDepth: 4,
        maxFutureSkewMs: 60_000,
        maxRequestExpansion: 8,
        retention: { logsDays: 7, tracesDays: 14, metricsDays: 400 },
      },
    });
    expect(config.api).to.deep.equal({
      port: 9090,
      queryTimeoutMs: 5000,
      pageMaxBytes: 2 * 1_048_576,
      listener: { maxConnections: 500, headersTimeoutMs: 2000, bodyTimeoutMs: 5000, metricsKey: 'scrape-key' },
    });
  });

  it('puts the write-ahead log in the data directory unless TENANTRY_WAL_DIR names another, as an absolute path', () => {
    const inData = ok('all', { TENANTRY_DATA_DIR: 'rel/data' });
    if (inData.target !== 'all') throw new Error('wrong target');
    expect(inData.gateway.writer.logDir).to.equal(resolve('rel/data', 'wal'));
    const own = ok('gateway', { ...server, TENANTRY_WAL_DIR: 'wal-here' });
    if (own.target !== 'gateway') throw new Error('wrong target');
    expect(own.gateway.writer.logDir).to.equal(resolve('wal-here'));
  });

  it('decodes server mode with a cluster and the keys file', () => {
    const config = ok('gateway', {
      ...server,
      TENANTRY_CLICKHOUSE_USER: 'ingest',
      TENANTRY_CLICKHOUSE_PASSWORD: ' p w ',
      TENANTRY_CLICKHOUSE_CLUSTER: 'main',
      TENANTRY_API_KEYS_FILE: '/etc/tenantry/keys.yaml',
    });
    if (config.target !== 'gateway') throw new Error('wrong target');
    expect(config.storage.clickhouse).to.deep.equal({
      kind: 'server',
      url: 'http://clickhouse:8123',
      user: 'ingest',
      password: ' p w ',
      database: 'tenantry',
      cluster: 'main',
    });
    expect(config.keys.file).to.equal('/etc/tenantry/keys.yaml');
  });

  it('decodes the operator port', () => {
    const config = ok('operator', { TENANTRY_OPERATOR_PORT: '9443' });
    expect(config).to.deep.include({
      target: 'operator',
      operator: { port: 9443, kubeconfig: undefined, namespaces: [], leaderElection: { enabled: true, namespace: 'default' } },
    });
  });

  const bad: ReadonlyArray<[string, string]> = [
    ['TENANTRY_LOG_LEVEL', 'verbose'],
    ['TENANTRY_WAL_SYNC', 'always'],
    ['TENANTRY_HOST', 'local host'],
    ['TENANTRY_DATA_DIR', '   '],
    ['TENANTRY_CLICKHOUSE_URL', 'clickhouse:8123'],
    ['TENANTRY_CLICKHOUSE_DATABASE', 'drop table; --'],
    ['TENANTRY_CLICKHOUSE_CLUSTER', '1cluster'],
    ['TENANTRY_LOGS_RETENTION_DAYS', '0'],
    ['TENANTRY_TRACES_RETENTION_DAYS', '1.5'],
    ['TENANTRY_METRICS_RETENTION_DAYS', 'ninety'],
    ['TENANTRY_OTLP_HTTP_PORT', '65536'],
    ['TENANTRY_OTLP_GRPC_PORT', '-1'],
    ['TENANTRY_MAX_REQUEST_BYTES', '16 parsecs'],
    ['TENANTRY_BATCH_MAX_ROWS', '0'],
    ['TENANTRY_BATCH_MAX_BYTES', '0'],
    ['TENANTRY_BATCH_MAX_DELAY_MS', '1e3'],
    ['TENANTRY_WAL_MAX_BYTES', 'lots'],
    ['TENANTRY_WAL_DIR', '   '],
    ['TENANTRY_API_PORT', '80a'],
    ['TENANTRY_QUERY_TIMEOUT_SECONDS', '0'],
    ['TENANTRY_API_PAGE_MAX_BYTES', '0'],
    ['TENANTRY_EMBEDDED_QUERY_TIMEOUT_SECONDS', '0'],
    ['TENANTRY_MAX_CONCURRENT_QUERIES', '0'],
    ['TENANTRY_MEMORY_LIMIT_BYTES', '0'],
    ['TENANTRY_MAX_CONNECTIONS', '0'],
    ['TENANTRY_HEADERS_TIMEOUT_MS', '10s'],
    ['TENANTRY_BODY_TIMEOUT_MS', '99'],
    ['TENANTRY_METRICS_KEY', '  '],
    ['TENANTRY_METRICS_TENANT_LABELS', 'some'],
    ['TENANTRY_MAX_INFLIGHT_BYTES', 'all of it'],
    ['TENANTRY_MAX_ATTRIBUTES', '0'],
    ['TENANTRY_MAX_ATTRIBUTE_KEY_BYTES', '1 kilo'],
    ['TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES', '0'],
    ['TENANTRY_MAX_LOG_BODY_BYTES', '-1'],
    ['TENANTRY_MAX_SPAN_NAME_BYTES', 'short'],
    ['TENANTRY_MAX_SPAN_EVENTS', '-1'],
    ['TENANTRY_MAX_SPAN_LINKS', '1.5'],
    ['TENANTRY_MAX_VALUE_DEPTH', '33'],
    ['TENANTRY_MAX_FUTURE_SKEW_SECONDS', '10m'],
    ['TENANTRY_MAX_REQUEST_EXPANSION', '0'],
    ['TENANTRY_TENANT_INGEST_BYTES_PER_SECOND', 'fast'],
    ['TENANTRY_TENANT_INGEST_BURST_BYTES', '0'],
    ['TENANTRY_TENANT_MAX_CONCURRENT_QUERIES', '1001'],
    ['TENANTRY_TENANT_MAX_QUERY_DAYS', '0'],
    ['TENANTRY_TENANT_QUERY_TIMEOUT_SECONDS', '3601'],
    ['TENANTRY_SETTINGS_REFRESH_SECONDS', '11'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}=${JSON.stringify(value)} naming the variable and the value`, () => {
      const extra = name === 'TENANTRY_CLICKHOUSE_CLUSTER' ? server : {};
      const found = errors('all', { ...extra, [name]: value });
      expect(found).to.have.length(1);
      expect(found[0]).to.contain(name).and.contain(JSON.stringify(value)).and.contain('expected');
    });
  }

  const operatorBad: Array<[string, string]> = [
    ['TENANTRY_WATCH_NAMESPACES', 'Obs,team_a'],
    ['TENANTRY_LEADER_ELECTION', 'maybe'],
    ['TENANTRY_LEADER_ELECTION_NAMESPACE', '-x'],
  ];

  it('decodes the per-tenant defaults, with retention from the retention variables, and checks byte bounds', () => {
    const decoded = decodeConfig('all', {
      TENANTRY_TENANT_INGEST_BYTES_PER_SECOND: '1MiB',
      TENANTRY_TENANT_MAX_QUERY_DAYS: '31',
      TENANTRY_LOGS_RETENTION_DAYS: '7',
      TENANTRY_SETTINGS_REFRESH_SECONDS: '2',
    });
    if (!decoded.ok || decoded.value.target !== 'all') throw new Error('expected a config');
    expect(decoded.value.settings).to.deep.equal({
      defaults: {
        limits: { ingestBytesPerSecond: 1_048_576, ingestBurstBytes: 32 * 1_048_576, maxConcurrentQueries: 8, maxQueryDays: 31, queryTimeoutSeconds: 30 },
        retention: { logsDays: 7, tracesDays: 30, metricsDays: 90 },
      },
      refreshMs: 2000,
    });
    expect(errors('all', { TENANTRY_TENANT_INGEST_BYTES_PER_SECOND: '512' })).to.deep.equal([
      'TENANTRY_TENANT_INGEST_BYTES_PER_SECOND=512 is invalid: it must be at least 1024',
    ]);
    expect(errors('gateway', { ...server, TENANTRY_API_KEYS: '[]', TENANTRY_TENANT_INGEST_BURST_BYTES: '101GiB' })).to.deep.equal([
      `TENANTRY_TENANT_INGEST_BURST_BYTES=${101 * 1024 ** 3} is invalid: it must be at most ${100 * 1024 ** 3}`,
    ]);
  });

  it('covers every variable with a bad-value case', () => {
    const tested = new Set([
      ...bad.map(([name]) => name),
      'TENANTRY_CLICKHOUSE_USER',
      'TENANTRY_CLICKHOUSE_PASSWORD',
      'TENANTRY_API_KEYS',
      'TENANTRY_API_KEYS_FILE',
      'TENANTRY_OPERATOR_PORT',
      ...operatorBad.map(([name]) => name),
      'TENANTRY_KUBECONFIG',
    ]);
    expect(Object.keys(allVariables).filter((name) => !tested.has(name))).to.deep.equal([]);
  });

  it('rejects a bad operator port', () => {
    expect(errors('operator', { TENANTRY_OPERATOR_PORT: 'http' })[0]).to.contain('TENANTRY_OPERATOR_PORT="http"');
  });

  for (const [name, value] of operatorBad) {
    it(`rejects operator setting ${name}=${JSON.stringify(value)}`, () => {
      const found = errors('operator', { [name]: value });
      expect(found).to.have.length(1);
      expect(found[0]).to.contain(name).and.contain(JSON.stringify(value)).and.contain('expected');
    });
  }

  it('decodes the operator watch scope and leader election', () => {
    const config = ok('operator', { TENANTRY_WATCH_NAMESPACES: 'obs, team-a', TENANTRY_LEADER_ELECTION: 'off', TENANTRY_KUBECONFIG: '/k/config' });
    expect(config).to.deep.include({
      operator: { port: 8081, kubeconfig: '/k/config', namespaces: ['obs', 'team-a'], leaderElection: { enabled: false, namespace: 'default' } },
    });
  });

  it('lets an empty ClickHouse user fall back to "default" and keeps an empty password', () => {
    const config = ok('gateway', { ...server, TENANTRY_CLICKHOUSE_USER: '', TENANTRY_CLICKHOUSE_PASSWORD: '', TENANTRY_API_KEYS: '[]' });
    expect(config).to.have.nested.property('storage.clickhouse.user', 'default');
    expect(config).to.have.nested.property('storage.clickhouse.password', '');
  });

  it('treats an empty value as unset, so the default applies', () => {
    const config = ok('all', { TENANTRY_API_PORT: '' });
    expect(config).to.have.nested.property('api.port', 8080);
  });

  it('reports every bad variable at once, and unknown TENANTRY_* names as typos', () => {
    const found = errors('all', { TENANTRY_API_PORT: 'x', TENANTRY_LOG_LEVEL: 'loud', TENANTRY_API_PROT: '9090' });
    expect(found).to.have.length(3);
    expect(found.join('\n')).to.contain('TENANTRY_API_PROT is not a Tenantry setting');
    // The test command's own variables are not the server's typos.
    expect(errors('all', { TENANTRY_API_PROT: '9090', TENANTRY_TEST_SKIP: 'k8s,helm' })).to.have.length(1);
  });

  it('refuses both key sources at once', () => {
    expect(errors('all', { TENANTRY_API_KEYS: '[]', TENANTRY_API_KEYS_FILE: 'keys.yaml' })[0]).to.contain('choose one');
  });

  it('refuses embedded mode for the split targets and a cluster without a server', () => {
    expect(errors('gateway', {})[0]).to.contain('TENANTRY_CLICKHOUSE_URL');
    expect(errors('api', {})[0]).to.contain('TENANTRY_CLICKHOUSE_URL');
    expect(errors('all', { TENANTRY_CLICKHOUSE_CLUSTER: 'main' })[0]).to.contain('server mode');
    expect(ok('migrate').target).to.equal('migrate');
  });

  it('target drain decodes the writer exactly as the gateway whose log it drains, and needs a server', () => {
    const settings = { ...server, TENANTRY_WAL_DIR: '/var/lib/tenantry/wal', TENANTRY_WAL_SYNC: 'fsync', TENANTRY_BATCH_MAX_ROWS: '500' };
    const drain = ok('drain', settings);
    const gateway = ok('gateway', settings);
    if (drain.target !== 'drain' || gateway.target !== 'gateway') throw new Error('wrong target');
    expect(drain.writer).to.deep.equal(gateway.gateway.writer);
    expect(drain.writer).to.deep.include({ logDir: '/var/lib/tenantry/wal', logSync: 'fsync', maxBatchRows: 500 });
    expect(drain.storage).to.deep.equal(gateway.storage);
    expect(errors('drain', {})[0]).to.contain('TENANTRY_CLICKHOUSE_URL');
  });

  it('refuses an unknown target', () => {
    expect(errors('everything', {})[0]).to.contain('unknown target "everything"');
  });

  it('accepts byte sizes with and without units', () => {
    const sizes: Record<string, number> = { '1': 1, '1024': 1024, '2KiB': 2048, '1.5MiB': 1.5 * 1024 * 1024, '1GB': 1e9, '3 kb': 3000 };
    for (const [raw, bytes] of Object.entries(sizes)) {
      expect(ok('all', { TENANTRY_MAX_REQUEST_BYTES: raw })).to.have.nested.property('gateway.maxRequestBytes', bytes);
    }
  });
});
