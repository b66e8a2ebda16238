// The parsed queries kept by text (promql-query.ts): a repeated text is not
// parsed again, a failed parse is not kept, and the least recently used text
// is dropped past the bound.
import assert from 'node:assert/strict';
import { parsePromqlQuery } from '../../../../../api/compat/prometheus/promql-query.ts';

const parsed = (text: string): object => {
  const r = parsePromqlQuery(text);
  assert.ok(r.ok, `parses ${text}`);
  return r.value;
};

describe('PromQL parse cache', () => {
  it('answers a text asked again with the tree it parsed before, equal to a fresh parse', () => {
    const first = parsed('sum by (code) (rate(parse_cache_a_total[5m]))');
    const again = parsed('sum by (code) (rate(parse_cache_a_total[5m]))');
    assert.equal(again, first);
    assert.notEqual(parsed('sum by (code) (rate(parse_cache_a_total[1m]))'), first);
  });

  it('keeps no failed parse: the error is given every time', () => {
    for (let i = 0; i < 2; i++) {
      const r = parsePromqlQuery('sum by (code) (');
      assert.ok(!r.ok);
      assert.equal(r.error.type, 'bad_data');
    }
  });

  it('drops the least recently used text past 512 texts, and keeps one used since', () => {
    const oldest = parsed('parse_cache_oldest');
    const used = parsed('parse_cache_used');
    for (let i = 0; i < 511; i++) {
      parsed(`parse_cache_filler_${i}`);
      if (i === 100) assert.equal(parsed('parse_cache_used'), used);
    }
    assert.equal(parsed('parse_cache_used'), used);
    assert.notEqual(parsed('parse_cache_oldest'), oldest);
  });
});
