// The request body reader's pure parts: media types, strict JSON, form fields.
import { expect } from 'chai';
import fc from 'fast-check';
import { mediaType, parseFormBody, parseJsonBody } from '../../../api/http/request-body.ts';

describe('api/request body parts', () => {
  it('reads the media type without parameters, in lowercase', () => {
    expect(mediaType(undefined)).to.equal('');
    expect(mediaType('application/json')).to.equal('application/json');
    expect(mediaType(' Application/JSON ; charset=UTF-8')).to.equal('application/json');
  });

  it('takes objects and arrays only, and an empty body as {}', () => {
    expect(parseJsonBody('')).to.deep.equal({ ok: true, value: {} });
    expect(parseJsonBody(' \n{"a":1}')).to.deep.equal({ ok: true, value: { a: 1 } });
    expect(parseJsonBody('[1]')).to.deep.equal({ ok: true, value: [1] });
    for (const text of ['"text"', '42', 'null', '{bad', '{"a":1} x']) {
      const r = parseJsonBody(text);
      expect(r.ok, text).to.equal(false);
      if (!r.ok) expect(r.error.message).to.contain('not valid JSON');
    }
  });

  it('refuses a __proto__ key at any depth, also written with escapes, but not as a value', () => {
    for (const text of ['{"__proto__":{"x":1}}', '{"a":[{"__proto__":1}]}', '{"\\u005f_proto__":1}']) {
      const r = parseJsonBody(text);
      expect(r.ok, text).to.equal(false);
      if (!r.ok) expect(r.error.message).to.contain('__proto__');
    }
    expect(parseJsonBody('{"body":"\\"__proto__\\": 1"}')).to.deep.equal({ ok: true, value: { body: '"__proto__": 1' } });
  });

  it('parses like JSON.parse for any object', () => {
    fc.assert(fc.property(fc.dictionary(fc.string().filter((k) => k !== '__proto__'), fc.jsonValue()), (value) => {
      const text = JSON.stringify(value);
      expect(parseJsonBody(text)).to.deep.equal({ ok: true, value: JSON.parse(text) as unknown });
    }));
  });

  it('reads form fields; a repeated name becomes an array; __proto__ stays a plain field', () => {
    expect(parseFormBody('name=Second%20name')).to.deep.equal({ name: 'Second name' });
    expect(parseFormBody('name=a&name=b&name=c')).to.deep.equal({ name: ['a', 'b', 'c'] });
    const odd = parseFormBody('__proto__=x');
    expect(Object.getPrototypeOf(odd)).to.equal(Object.prototype);
    expect(Object.keys(odd)).to.deep.equal(['__proto__']);
  });
});
