// Go (RE2) regular expressions as label_replace takes them, run by the
// JavaScript engine: the syntax the two spell differently translated, and
// Go's template expansion ($1, ${1}, $name, $$) for the replacement.

const posixClasses: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-/:-@[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const escapeLiteral = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** The JavaScript source of a Go regex, or undefined for syntax JavaScript cannot express. */
function translate(source: string): string | undefined {
  let out = '';
  let i = 0;
  let inClass = false;
  while (i < source.length) {
    const ch = source[i] ?? '';
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (next === 'Q') {
        const end = source.indexOf('\\E', i + 2);
        const literal = end < 0 ? source.slice(i + 2) : source.slice(i + 2, end);
        out += escapeLiteral(literal);
        i = end < 0 ? source.length : end + 2;
        continue;
      }
      if (next === 'z' && !inClass) out += '(?![\\s\\S])';
      else if (next === 'A' && !inClass) out += '(?<![\\s\\S])';
      else if (next === 'p' || next === 'P' || next === 'C') return undefined;
      else out += ch + next;
      i += 2;
      continue;
    }
    if (inClass) {
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(source.slice(i));
      if (posix !== null) {
        const range = posixClasses[posix[2] ?? ''];
        if (range === undefined || posix[1] === '^') return undefined;
        out += range;
        i += posix[0].length;
        continue;
      }
      if (ch === ']') inClass = false;
      else if (ch === '[') {
        out += '\\[';
        i++;
        continue;
      }
      out += ch;
      i++;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      i++;
      // A ']' right after '[' or '[^' is a literal in Go.
      if (source[i] === '^') {
        out += '^';
        i++;
      }
      if (source[i] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (source.startsWith('(?P<', i)) {
      out += '(?<';
      i += 4;
      continue;
    }
    const flags = /^\(\?([imsU]+)\)/.exec(source.slice(i));
    if (flags !== null) {
      // A flag group applies to the rest of the enclosing group; only the leading one is common and expressible.
      if (i !== 0 || /[mU]/.test(flags[1] ?? '')) return undefined;
      const rest = translate(source.slice(flags[0].length));
      return rest === undefined ? undefined : `(?${flags[1] ?? ''}:${rest})`;
    }
    out += ch;
    i++;
  }
  return out;
}

/** A Go regex fully anchored with `.` matching newlines, as label_replace compiles it; undefined when invalid. */
export function compileAnchored(source: string): RegExp | undefined {
  const body = translate(source);
  if (body === undefined) return undefined;
  try {
    return new RegExp(`^(?:${body})$`, 's');
  } catch {
    return undefined;
  }
}

/** Go's Regexp.ExpandString: `template` with $n, ${n}, $name, ${name} replaced from `match`, `$$` a dollar. */
export function expandTemplate(template: string, match: RegExpExecArray): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const dollar = template.indexOf('$', i);
    if (dollar < 0) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, dollar);
    const rest = template.slice(dollar + 1);
    if (rest.startsWith('$')) {
      out += '$';
      i = dollar + 2;
      continue;
    }
    const braced = /^\{([A-Za-z0-9_]+)\}/.exec(rest);
    const bare = /^[A-Za-z0-9_]+/.exec(rest);
    const name = braced?.[1] ?? bare?.[0];
    if (name === undefined) {
      out += '$';
      i = dollar + 1;
      continue;
    }
    i = dollar + 1 + (braced?.[0].length ?? name.length);
    if (/^[0-9]+$/.test(name)) {
      const n = Number(name);
      out += n < match.length ? (match[n] ?? '') : '';
    } else {
      out += match.groups?.[name] ?? '';
    }
  }
  return out;
}
