// The statements the API's routes build, learnt by calling a route's own
// handler with a QueryRunner (api/query/query-runner.ts, the routes' port to
// the store) that records what it is handed and answers no rows. The benches
// then time those statements straight through the client, so the API's SQL
// is split from its HTTP cost without the query modules exporting their
// statement builders for them.
import type { RouteDeps } from '../api/query/deps.ts';
import type { QueryRunner } from '../api/query/query-runner.ts';
import type { Statement } from '../api/query/tenant-scan.ts';
import type { ApiError } from '../api/http/api-error.ts';
import { ok } from '../src/result.ts';
import type { Result } from '../src/result.ts';

/** A runner that keeps every statement it is handed and answers each with nothing (no rows, no bytes). */
export class RecordingRunner implements QueryRunner {
  readonly statements: Statement[] = [];

  rows<T>(statement: Statement): Promise<Result<T[], ApiError>> {
    this.statements.push(statement);
    return Promise.resolve(ok([]));
  }

  manyRows<T>(statement: Statement): Promise<Result<T[], ApiError>> {
    this.statements.push(statement);
    return Promise.resolve(ok([]));
  }

  command(statement: Statement): Promise<Result<undefined, ApiError>> {
    this.statements.push(statement);
    return Promise.resolve(ok(undefined));
  }

  binary(statement: Statement): Promise<Result<Buffer, ApiError>> {
    this.statements.push(statement);
    return Promise.resolve(ok(Buffer.alloc(0)));
  }
}

/**
 * The one statement a route handler runs for a request whose store has no
 * rows: `handle` is called with `deps` and a runner that records. A handler that
 * runs none, or several, is not what the bench measures: it throws.
 */
export async function statementOf(deps: Omit<RouteDeps, 'runner'>, handle: (deps: RouteDeps) => Promise<{ readonly ok: boolean }>): Promise<Statement> {
  const runner = new RecordingRunner();
  const answered = await handle({ ...deps, runner });
  if (!answered.ok) throw new Error('the route refused the request');
  const [statement, ...more] = runner.statements;
  if (statement === undefined || more.length > 0) throw new Error(`the route ran ${runner.statements.length} statements, the bench expects one`);
  return statement;
}
