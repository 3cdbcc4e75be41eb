// Members: every agent this one knows, with status, records owned, and the
// round trip estimated from Vivaldi coordinates, plus a map where the
// distance from the centre is that estimate.
import {h, svg, replace, table, badge} from '../dom.js';
import {watch, serverNow} from '../live.js';
import {ms, age, num, matches, redact} from '../fmt.js';
import {searchBox, select, section} from '../widgets.js';

// state says how long a member has been what it is: an alive member's
// uptime (its incarnation is its start time, on its own clock), a dead or
// departed one's time since this agent saw it go (since, on this agent's).
function state(m, inc, now) {
  if (m.status !== 'alive') {
    const since = Date.parse(m.since || '');
    return Number.isNaN(since) ? m.status : m.status + ' ' + age(since, now);
  }
  return inc > 1e15 ? 'up ' + age(inc / 1e6, now) : '—';
}

export default function members({main, signal, title}) {
  title('Members');
  let data = null;
  let q = new URLSearchParams(location.search).get('q') || '';
  let status = '';
  const list = h('div');
  const map = h('div', {class: 'map'});
  replace(main, h('h1', null, 'Members'),
    h('div', {class: 'filters'}, searchBox('Filter by name, address or tag', (v) => { q = v; draw(); }),
      select('Status', [['', 'any status'], ['alive', 'alive'], ['dead', 'dead'], ['left', 'left']], (v) => { status = v; draw(); })),
    list, section('Network map', h('p', {class: 'muted'},
      'Distance from the centre (this agent) is the estimated round trip; direction is the first two Vivaldi dimensions.'), map));

  function draw() {
    if (!data) return;
    const coords = new Map(data.coords.body.map((c) => [c.name, c]));
    const records = new Map(data.origins.body.map((o) => [o.origin, o.records]));
    const now = serverNow();
    const rows = data.members.body.filter((m) => (!status || m.status === status) &&
      matches(q, m.name, m.addr, m.status, ...Object.entries(m.tags || {}).map(([k, v]) => k + '=' + v)))
      .map((m) => {
        const c = coords.get(m.name) || {};
        const inc = Number((m.tags || {}).inc);
        const tags = Object.entries(m.tags || {}).filter(([k]) => k !== 'inc').sort()
          .map(([k, v]) => h('span', {class: 'tag'}, k + '=' + redact(k, v)));
        return h('tr', {'data-member': m.name, class: m.status},
          h('td', null, m.name), h('td', null, badge(m.status)), h('td', {class: 'mono'}, m.addr),
          h('td', {class: 'num'}, m.status === 'alive' ? ms(c.rttMs) : '—'),
          h('td', {class: 'num'}, m.status === 'alive' ? num(records.get(m.name) || 0) : '—'),
          h('td', {class: 'num', title: m.status === 'alive' ? 'incarnation ' + (m.tags || {}).inc + ' (the start time on that host\'s clock)'
            : 'since this agent saw it ' + m.status}, state(m, inc, now)),
          h('td', null, tags));
      });
    replace(list, rows.length ? table(['Name', 'Status', 'Address', 'RTT', 'Records', 'How long', 'Tags'], rows, {id: 'members'})
      : h('p', {class: 'empty'}, 'No member matches.'));
    replace(map, drawMap(data.members.body, coords, data.coords.body[0]));
  }

  watch({
    members: '/v1/members',
    origins: '/v1/origins',
    coords: '/v1/coordinates',
  }, (d) => { data = d; draw(); }, signal, {wait: '15s', refresh: true});
}

function drawMap(members, coords, self) {
  const pts = [];
  for (const m of members) {
    const c = coords.get(m.name);
    if (!c || !c.coord || !self || !self.coord || c.rttMs === null) continue;
    const dx = c.coord.vec[0] - self.coord.vec[0];
    const dy = c.coord.vec[1] - self.coord.vec[1];
    const len = Math.hypot(dx, dy);
    const angle = len > 0 ? Math.atan2(dy, dx) : 0;
    pts.push({m, rtt: c.rttMs, angle});
  }
  if (!pts.length) return h('p', {class: 'muted'}, 'No coordinates yet: they come with the first probes.');
  const max = Math.max(1, ...pts.map((p) => p.rtt)) * 1.15;
  const R = 120;
  const rings = [0.25, 0.5, 0.75, 1].map((f) => [
    svg('circle', {cx: 0, cy: 0, r: R * f, class: 'ring'}),
    svg('text', {x: 0, y: R * f - 3, class: 'ring-label'}, ms(max * f)),
  ]);
  const dots = pts.map((p) => {
    const r = (p.rtt / max) * R;
    const x = Math.cos(p.angle) * r;
    const y = Math.sin(p.angle) * r;
    return svg('g', {class: 'dot ' + p.m.status},
      svg('circle', {cx: x.toFixed(1), cy: y.toFixed(1), r: p.rtt === 0 ? 6 : 4}, svg('title', null, p.m.name + ': ' + ms(p.rtt))),
      svg('text', {x: (x + 7).toFixed(1), y: (y + 4).toFixed(1)}, p.m.name));
  });
  return svg('svg', {viewBox: `${-R - 10} ${-R - 16} ${2 * R + 80} ${2 * R + 28}`, role: 'img', 'aria-label': 'network map'}, rings, dots);
}
