// Where test/peers/build-peers.sh puts the Loki and Tempo binaries, for the
// peer benchmark and the differential tests. Keep these versions equal to the
// ones pinned in that script.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const lokiVersion = 'v3.7.8';
/** Module pseudo-version of github.com/grafana/tempo: main on 2025-05-29 (v2.8.0-rc.0). */
export const tempoVersion = 'v1.5.1-0.20250529124718-87c2dc380cec';

export interface PeerBinaries {
  readonly loki: string;
  readonly logcli: string;
  readonly tempo: string;
  readonly tempoCli: string;
}

/** The cached binaries, or a sentence saying why they are not there (for a skip). */
export function findPeerBinaries(): { readonly ok: true; readonly binaries: PeerBinaries } | { readonly ok: false; readonly reason: string } {
  const root = process.env['PEERS_CACHE'] ?? join(homedir(), '.cache', 'tenantry', 'peers');
  const loki = join(root, `loki-${lokiVersion}`);
  const tempo = join(root, `tempo-${tempoVersion}`);
  const binaries = { loki: join(loki, 'loki'), logcli: join(loki, 'logcli'), tempo: join(tempo, 'tempo'), tempoCli: join(tempo, 'tempo-cli') };
  const missing = Object.values(binaries).filter((p) => !existsSync(p));
  return missing.length === 0
    ? { ok: true, binaries }
    : { ok: false, reason: `Loki/Tempo binaries missing (${missing.join(', ')}); run: bash test/peers/build-peers.sh` };
}
