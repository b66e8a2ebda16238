// The request body reader: media types, strict JSON through koa-body as the
// API configures it (on a Koa context over an in-memory request), form fields.
import { ServerResponse } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import fc from 'fast-check';
import Koa from 'koa';
import type { ApiError } from '../../../api/http/api-error.ts';
import { bodyReader, mediaType, nestsDeeperThan, parseFormBody } from '../../../api/http/request-body.ts';
import type { Result } from '../../../src/result.ts';

const readBody = bodyReader({ limit: 1_048_576, formMethods: new Set(['PUT']), maxDepth: 32 });
const app = new Koa();

/** The API's reading of `text` sent as a JSON POST body. */
function parseJsonBody(text: string): Promise<Result<unknown, ApiError>> {
  const bytes = Buffer.from(text);
  const req = Object.assign(Readable.from([bytes]), {
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
  }) as unknown as IncomingMessage;
  return readBody(app.createContext(req, new ServerResponse(req)));
}

describe('api/request body parts', () => {
  it('reads the media type without parameters, in lowercase', () => {
    expect(mediaType(undefined)).to.equal('');
    expect(mediaType('application/json')).to.equal('application/json');
    expect(mediaType(' Application/JSON ; charset=UTF-8')).to.equal('application/json');
  });

  it('takes objects and arrays only, and an empty body as {}', async () => {
    expect(await parseJsonBody('')).to.deep.equal({ ok: true, value: {} });
    expect(await parseJsonBody(' \n{"a":1}')).to.deep.equal({ ok: true, value: { a: 1 } });
    expect(await parseJsonBody('[1]')).to.deep.equal({ ok: true, value: [1] });
    for (const text of ['"text"', '42', 'null', '{bad', '{"a":1} x']) {
      const r = await parseJsonBody(text);
      expect(r.ok, text).to.equal(false);
      if (!r.ok) expect(r.error.message).to.contain('not valid JSON');
    }
  });

  it('refuses a __proto__ key at any depth, also written with escapes, but not as a value', async () => {
    for (const text of ['{"__proto__":{"x":1}}', '{"a":[{"__proto__":1}]}', '{"\\u005f_proto__":1}']) {
      const r = await parseJsonBody(text);
      expect(r.ok, text).to.equal(false);
      if (!r.ok) expect(r.error.message).to.contain('__proto__');
    }
    expect(await parseJsonBody('{"body":"\\"__proto__\\": 1"}')).to.deep.equal({ ok: true, value: { body: '"__proto__": 1' } });
  });

  it('parses like JSON.parse for any object', async () => {
    // A __proto__ key at any depth is refused (the test above); fc.jsonValue() writes one now and then, so such values are left out.
    const withoutProto = fc.dictionary(fc.string(), fc.jsonValue()).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
    await fc.assert(
      fc.asyncProperty(withoutProto, async (value) => {
        const text = JSON.stringify(value);
        expect(await parseJsonBody(text)).to.deep.equal({ ok: true, value: JSON.parse(text) as unknown });
      }),
    );
  });

  it('reads form fields; a repeated name becomes an array; __proto__ stays a plain field', () => {
    expect(parseFormBody('name=Second%20name')).to.deep.equal({ name: 'Second name' });
    expect(parseFormBody('name=a&name=b&name=c')).to.deep.equal({ name: ['a', 'b', 'c'] });
    const odd = parseFormBody('__proto__=x');
    expect(Object.getPrototypeOf(odd)).to.equal(Object.prototype);
    expect(Object.keys(odd)).to.deep.equal(['__proto__']);
  });

  it('measures nesting without recursion, also 100k levels deep', () => {
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 3)).to.equal(false);
    expect(nestsDeeperThan({ a: [1, { b: {} }] }, 3)).to.equal(true);
    expect(nestsDeeperThan('text', 0)).to.equal(false);
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) as unknown;
    expect(nestsDeeperThan(deep, 32)).to.equal(true);
  });

  it('refuses a body nested deeper than the bound with a 400 naming it, and takes one at the bound', async () => {
    const at = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    expect(await parseJsonBody(at(32))).to.deep.equal({ ok: true, value: JSON.parse(at(32)) as unknown });
    const deeper = await parseJsonBody(`{"startTime":1,"body":${at(100_000)}}`);
    expect(deeper.ok).to.equal(false);
    if (!deeper.ok) expect(deeper.error).to.deep.equal({ code: 'invalid_request', message: 'request body nests arrays and objects deeper than 32 levels' });
  });
});
