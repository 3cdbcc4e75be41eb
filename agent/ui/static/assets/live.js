// live.js is the one long-poll helper every view shares. Each polled path
// runs its own blocking query (?index=N&wait=W): the agent answers when
// that answer changes, or when the wait runs out. There is no timer that
// polls: a retry waits only after a failure, with backoff, and the banner
// says the connection is lost until an answer comes back.

const conn = {lost: null, listeners: new Set()};
let skewMs = 0; // the agent's clock minus ours, from the Date header

// serverNow is the agent's clock, as far as its Date headers tell.
export function serverNow() { return Date.now() + skewMs; }

export function onConnection(fn) { conn.listeners.add(fn); fn(conn.lost); }

function setLost(err) {
  const lost = err ? String(err.message || err) : null;
  if (lost === conn.lost) return;
  conn.lost = lost;
  for (const fn of conn.listeners) fn(lost);
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, {once: true});
  });
}

// get fetches one API path once: {status, index, body}. 404 is an answer
// (the topic or service is gone); other errors throw.
export async function get(path, signal, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) url.searchParams.set(k, v);
  const res = await fetch(url, {signal, headers: {Accept: 'application/json'}, cache: 'no-store'});
  const date = Date.parse(res.headers.get('Date') || '');
  if (!Number.isNaN(date)) skewMs = date - Date.now();
  const type = res.headers.get('Content-Type') || '';
  const body = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok && res.status !== 404) {
    throw new Error(`${path}: ${res.status} ${body && body.error ? body.error : ''}`.trim());
  }
  return {status: res.status, index: res.headers.get('X-Namecast-Index') || '', body};
}

// watch follows the cluster for one view. It holds ONE blocking query,
// on /v1/index, which answers when anything in the cluster changed (or
// when the wait runs out); then it fetches the view's sources, by name, and
// calls render(data) with every answer. One query per page, not one per
// source: browsers keep at most six connections per host, so a page with
// several hanging queries would stall the next tab or navigation.
//
// opts.wait is the blocking query's wait; with opts.refresh the view is
// also fetched again when the wait runs out (for figures with no index of
// their own, such as round-trip estimates). A burst of changes is taken in
// one fetch: the next query starts after the view is drawn. Ends when
// signal aborts.
//
// With ?once in the page's address the view is drawn once and no query is
// held open: a tool that waits for the network to go quiet (a headless
// screenshot with --virtual-time-budget, a crawler) would otherwise wait
// forever, since a live page always has its blocking query open.
export function watch(sources, render, signal, opts = {}) {
  const wait = opts.wait || '60s';
  if (new URLSearchParams(location.search).has('once')) {
    const data = {};
    Promise.all(Object.entries(sources).map(async ([name, path]) => { data[name] = await get(path, signal); }))
      .then(() => { if (!signal.aborted) { setLost(null); render(data); } }, (err) => { if (!signal.aborted) setLost(err); });
    return;
  }
  (async () => {
    let index = '';
    let backoff = 250;
    while (!signal.aborted) {
      try {
        const data = {};
        const fetchAll = () => Promise.all(Object.entries(sources).map(async ([name, path]) => {
          data[name] = await get(path, signal);
        }));
        // The first time, the view and the index are fetched together: the
        // view may be newer than the index, which only costs one more fetch.
        const first = index ? null : fetchAll();
        // If the index query fails first, nothing awaits first, and its
        // failure (the same lost connection, reported below) would surface
        // as an uncaught rejection in the console; await still throws it.
        first?.catch(() => {});
        const ans = await get('/v1/index', signal, index ? {index, wait} : {});
        const changed = ans.index !== index;
        if (!changed && !opts.refresh && index) continue;
        await (first || fetchAll());
        if (signal.aborted) return;
        setLost(null);
        backoff = 250;
        index = ans.index;
        render(data);
      } catch (err) {
        if (signal.aborted) return;
        setLost(err);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 5000);
        index = ''; // the agent may have restarted: its indexes start over
      }
    }
  })();
}
