// How a bench tenant (`tenant-N`) is named to each peer that keeps tenants
// apart. VictoriaLogs identifies a tenant by two numbers in the AccountID and
// ProjectID headers; tenant-N is account N + 1 (account 0 is the default
// tenant of a request without the headers).

/** The VictoriaLogs headers of a bench tenant. */
export function victoriaLogsTenant(tenant: string): Record<string, string> {
  const n = Number(/(\d+)$/.exec(tenant)?.[1] ?? '0');
  return { AccountID: String(n + 1), ProjectID: '0' };
}
