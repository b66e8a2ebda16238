// Whole gateway and API configurations for tests and benchmarks, as the
// process decodes them from no settings at all (every default of
// src/config/variables.ts), with only what the caller names changed. The
// components take complete configurations, so a test runs what production
// runs unless it says otherwise, and a new setting needs no edit here.
import { decodeConfig } from '../src/config/config.ts';
import type { ApiConfig, Config, GatewayConfig, WriterConfig } from '../src/config/config.ts';

/** Changes to a default gateway configuration; `writer` is merged field by field. */
export type GatewayOverrides = Partial<Omit<GatewayConfig, 'writer'>> & { readonly writer?: Partial<WriterConfig> };

function defaults(): Extract<Config, { target: 'all' }> {
  const decoded = decodeConfig('all', {});
  if (!decoded.ok) throw new Error(`bug: the defaults do not decode: ${decoded.error.join('; ')}`);
  if (decoded.value.target !== 'all') throw new Error('bug: target all decoded as another');
  return decoded.value;
}

/** The gateway configuration of a process started without settings, with `overrides` (ports 0 unless given). */
export function gatewayConfig(overrides: GatewayOverrides = {}): GatewayConfig {
  const base = defaults().gateway;
  const { writer, ...rest } = overrides;
  return { ...base, otlpHttpPort: 0, otlpGrpcPort: 0, ...rest, writer: { ...base.writer, ...writer } };
}

/** The API configuration of a process started without settings, with `overrides` (port 0 unless given). */
export function apiConfig(overrides: Partial<ApiConfig> = {}): ApiConfig {
  return { ...defaults().api, port: 0, ...overrides };
}
