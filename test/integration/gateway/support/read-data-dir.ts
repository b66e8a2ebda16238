// node read-data-dir.ts <dataDir> <sql>: prints the rows of one query as JSON.
import { openStore } from '../../../../src/clickhouse/store.ts';

const [dataDir, sql] = process.argv.slice(2);
if (dataDir === undefined || sql === undefined) throw new Error('usage: read-data-dir.ts <dataDir> <sql>');
const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
if (!opened.ok) throw new Error(opened.error);
const rs = await opened.value.client.query({ query: sql, format: 'JSONEachRow' });
process.stdout.write(JSON.stringify(await rs.json()));
await opened.value.close();
