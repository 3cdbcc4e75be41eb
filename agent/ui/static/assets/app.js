// app.js: the shell. It maps the address to a view (client-side routing:
// the agent serves index.html for every /ui/ path, so deep links load
// directly), follows links without reloading, shows the connection state,
// and gives each view an AbortSignal that ends its blocking queries when
// the view is left.
import {h, replace} from './dom.js';
import {get, onConnection} from './live.js';
import overview from './views/overview.js';
import members from './views/members.js';
import topics from './views/topics.js';
import topic from './views/topic.js';
import clusters from './views/clusters.js';
import services from './views/services.js';
import service from './views/service.js';
import apps from './views/apps.js';
import app from './views/app.js';
import rules from './views/rules.js';
import agent from './views/agent.js';

const routes = [
  [/^\/ui\/?$/, overview, 'Overview'],
  [/^\/ui\/members\/?$/, members, 'Members'],
  [/^\/ui\/topics\/?$/, topics, 'Topics'],
  [/^\/ui\/topics\/([^/]+)$/, topic, 'Topics'],
  [/^\/ui\/clusters\/?$/, clusters, 'Clusters'],
  [/^\/ui\/services\/?$/, services, 'Services'],
  [/^\/ui\/services\/([^/]+)$/, service, 'Services'],
  [/^\/ui\/apps\/?$/, apps, 'Applications'],
  [/^\/ui\/apps\/([^/]+)$/, app, 'Applications'],
  [/^\/ui\/rules\/?$/, rules, 'Rules'],
  [/^\/ui\/agent\/?$/, agent, 'Agent'],
];

const main = document.getElementById('view');
let current = null;

function show() {
  if (current) current.abort();
  current = new AbortController();
  const path = location.pathname;
  for (const [re, view, section] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    const args = m.slice(1).map((s) => { try { return decodeURIComponent(s); } catch { return s; } });
    for (const a of document.querySelectorAll('#nav a')) {
      a.classList.toggle('active', a.textContent === section);
    }
    replace(main, h('p', {class: 'muted'}, 'Loading…'));
    view({main, signal: current.signal, args, title: (t) => { document.title = t + ' · namecast'; }});
    return;
  }
  replace(main, h('h1', null, 'No such page'), h('p', null, 'Pick a page above.'));
}

// Links inside the UI change the view without a reload.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a');
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const href = a.getAttribute('href');
  if (!href || !href.startsWith('/ui/')) return;
  ev.preventDefault();
  if (href !== location.pathname + location.search) history.pushState(null, '', href);
  show();
  window.scrollTo(0, 0);
});
window.addEventListener('popstate', show);
// Leaving the page ends its blocking queries at once: a browser keeps only
// a few connections per host, and a query left hanging would hold one.
window.addEventListener('pagehide', () => { if (current) current.abort(); });
window.addEventListener('pageshow', (ev) => { if (ev.persisted) show(); });

const banner = document.getElementById('conn');
onConnection((lost) => {
  banner.hidden = !lost;
  replace(banner, lost ? 'Lost the connection to this agent (' + lost + '); retrying…' : '');
});

// The agent's name in the header; a failure here is shown by the views.
get('/v1/health', new AbortController().signal).then((ans) => {
  replace(document.getElementById('node'), ans.body.node || '');
}, () => {});

show();
