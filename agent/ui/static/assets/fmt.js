// fmt.js turns API values into what people read. No DOM here.

// perm is RocketMQ's permission bits as the CLI shows them: R, W, I.
export function perm(p) {
  return (p & 4 ? 'R' : '-') + (p & 2 ? 'W' : '-') + (p & 1 ? 'I' : '-');
}

export function ms(v) {
  if (v === null || v === undefined) return '—';
  if (v === 0) return 'local';
  return v < 1 ? v.toFixed(2) + ' ms' : v < 100 ? v.toFixed(1) + ' ms' : Math.round(v) + ' ms';
}

// age says how long ago a time (ms since the epoch) was, coarsely.
export function age(thenMs, nowMs) {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
  if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
  return Math.floor(s / 86400) + 'd ' + Math.floor((s % 86400) / 3600) + 'h';
}

// Secrets never reach the page: a parameter or tag whose name says it holds
// one shows as <redacted>, and so does the password of a URL's user info.
const secretName = /(token|passw|secret|credential|access[-_.]?key|private[-_.]?key|^key$|signature|auth)/i;
export const REDACTED = '<redacted>';
export function redact(name, value) {
  return secretName.test(name) && value !== '' ? REDACTED : value;
}

function decode(s) {
  try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch { return s; }
}

// parseURL splits a Dubbo URL (protocol://[user[:pass]@]host:port/path?k=v&...)
// into parts, values decoded and secrets redacted; shown is the URL with
// the secrets taken out.
export function parseURL(raw) {
  const out = {protocol: '', user: '', address: '', path: '', params: [], shown: raw};
  let rest = raw;
  const scheme = rest.indexOf('://');
  if (scheme >= 0) { out.protocol = rest.slice(0, scheme); rest = rest.slice(scheme + 3); }
  const q = rest.indexOf('?');
  const query = q >= 0 ? rest.slice(q + 1) : '';
  if (q >= 0) rest = rest.slice(0, q);
  const slash = rest.indexOf('/');
  let authority = slash >= 0 ? rest.slice(0, slash) : rest;
  out.path = slash >= 0 ? decode(rest.slice(slash + 1)) : '';
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const [user, pass] = authority.slice(0, at).split(':');
    out.user = decode(user) + (pass !== undefined ? ':' + REDACTED : '');
    authority = authority.slice(at + 1);
  }
  out.address = authority;
  for (const kv of query ? query.split('&') : []) {
    const eq = kv.indexOf('=');
    const k = decode(eq >= 0 ? kv.slice(0, eq) : kv);
    const v = eq >= 0 ? decode(kv.slice(eq + 1)) : '';
    out.params.push([k, redact(k, v)]);
  }
  const shownQuery = out.params.map(([k, v]) => k + '=' + v).join('&');
  out.shown = (out.protocol ? out.protocol + '://' : '') + (out.user ? out.user + '@' : '') +
    out.address + (out.path ? '/' + out.path : '') + (shownQuery ? '?' + shownQuery : '');
  out.dynamic = !out.params.some(([k, v]) => k === 'dynamic' && v === 'false');
  return out;
}

// parseMetrics reads the Prometheus text format into [{name, labels, value}].
export function parseMetrics(txt) {
  const out = [];
  for (const line of String(txt).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (m) out.push({name: m[1], labels: m[3] || '', value: Number(m[4])});
  }
  return out;
}

export function num(v) {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en');
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

// matches is the search box's test: every word appears in one of the fields.
export function matches(query, ...fields) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = fields.join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}

export const enc = encodeURIComponent;

// plural says '1 broker group', '2 broker groups'.
export function plural(n, one, many) {
  return num(n) + ' ' + (n === 1 ? one : many || one + 's');
}
