// This agent: version, uptime, the address of each door, the figures that
// matter (records, members, door connections and sessions, changes per
// second) from /metrics, and the configuration (secrets redacted by the
// agent). Every other series is one click away, and /metrics is linked.
import {h, replace, table} from '../dom.js';
import {watch, serverNow} from '../live.js';
import {parseMetrics, num, matches, REDACTED} from '../fmt.js';
import {searchBox, section} from '../widgets.js';

// The figures shown as cards: [title, series (without namecast_), note].
// A series the agent does not export (a door that is off) is left out.
const gauges = [
  ['Records', 'routes_records', 'in this agent\'s table'],
  ['Members', 'gossip_members', 'alive'],
  ['RocketMQ', 'rocketmq_connections', 'connections', 'rocketmq_live_brokers', 'live brokers here'],
  ['ZooKeeper', 'zookeeper_connections', 'connections', 'zookeeper_sessions', 'sessions'],
  ['ZooKeeper watches', 'zookeeper_watches', 'watches', 'zookeeper_znodes', 'znodes'],
  ['Nacos', 'nacos_connections', 'gRPC connections', 'nacos_instances', 'instances held here'],
  ['Nacos subscribers', 'nacos_subscribers', 'service subscriptions', 'nacos_config_listeners', 'config listeners'],
  ['Multicast', 'multicast_held', 'registrations held here'],
  ['Redis', 'redis_connections', 'connections', 'redis_held_fields', 'fields held here'],
];
// Counters shown as a rate between two reads of /metrics.
const rates = [
  ['Changes here', 'routes_local_changes_total', 'per second, written through this agent'],
  ['Changes from peers', 'gossip_ops_applied_total', 'per second, applied from gossip'],
];

export default function agent({main, signal, title}) {
  title('Agent');
  let data = null;
  let prev = null; // the previous read of the counters: {at, values}
  let q = new URLSearchParams(location.search).get('q') || '';
  const body = h('div');
  const cards = h('div', {class: 'cards', id: 'figures'});
  const series = h('div');
  const config = h('div');
  replace(main, h('h1', null, 'This agent'), body,
    section('Figures', h('p', {class: 'muted'}, 'From ', h('a', {href: '/metrics'}, '/metrics'),
      ' (Prometheus text); refreshed when the cluster changes, and every 15 s at most.'), cards,
    h('details', {id: 'all-series'}, h('summary', null, 'Every series'),
      h('div', {class: 'filters'}, searchBox('Filter series (e.g. http, memberlist, gossip)', (v) => { q = v; drawSeries(); })), series)),
    config);

  function drawSeries() {
    if (!data) return;
    const rows = data.metrics
      .filter((m) => m.name.startsWith('namecast_') && Number.isFinite(m.value) && matches(q, m.name, m.labels))
      .map((m) => h('tr', null, h('td', {class: 'mono'}, m.name.replace(/^namecast_/, '')),
        h('td', {class: 'mono muted'}, m.labels), h('td', {class: 'num'}, num(m.value))));
    replace(series, rows.length ? table(['Series', 'Labels', 'Value'], rows, {id: 'metrics'}) : h('p', {class: 'empty'}, 'No series match.'));
  }

  watch({
    health: '/v1/health',
    info: '/v1/agent',
    metrics: '/metrics',
  }, (d) => {
    const metrics = parseMetrics(d.metrics.body);
    data = {metrics};
    const value = new Map(metrics.filter((m) => !m.labels).map((m) => [m.name.replace(/^namecast_/, ''), m.value]));
    const a = d.info.body;
    const cfg = a.config || {};
    const door = (addr) => !addr || addr === 'off' ? 'off' : addr;
    const facts = [
      ['Node', a.node], ['Version', a.version + ' (' + a.goVersion + ')'], ['Status', d.health.body.status + (a.ready ? ', synced' : ', syncing')],
      ['Started', new Date(a.started).toLocaleString() + ' (up ' + a.uptime + ')'], ['Incarnation', String(a.incarnation)],
      ['Gossip', a.gossipAddr], ['HTTP API and UI', a.httpAddr],
      ['RocketMQ', door(a.rocketmqAddr)], ['ZooKeeper', door(a.zookeeperAddr ?? cfg.zookeeper)],
      'nacosAddr' in a || 'nacos' in cfg ? ['Nacos', door(a.nacosAddr ?? cfg.nacos)] : null,
      'multicastAddr' in a || 'multicast' in cfg ? ['Dubbo multicast', door(a.multicastAddr ?? cfg.multicast)] : null,
      'redisAddr' in a || 'redis' in cfg ? ['Redis', door(a.redisAddr ?? cfg.redis)] : null,
    ].filter(Boolean);
    const cfgRows = Object.entries(cfg).map(([k, v]) => h('tr', null, h('th', {class: 'mono'}, k),
      h('td', {class: v === REDACTED ? 'mono redacted' : 'mono'}, v === '' || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v))));
    replace(body, h('table', {class: 'facts', id: 'summary'}, h('tbody', null, facts.map(([k, v]) => h('tr', null, h('th', null, k), h('td', {class: 'mono'}, v))))));
    replace(config, section('Configuration', h('p', {class: 'muted'}, 'As flags or the config file set it, defaults filled in; secrets are redacted by the agent.'),
      h('table', {class: 'facts', id: 'config'}, h('tbody', null, cfgRows))));

    const now = performance.now();
    const out = [];
    for (const [t, s1, n1, s2, n2] of gauges) {
      if (!value.has(s1)) continue;
      out.push(card(t, num(value.get(s1)), n1, s2 && value.has(s2) ? num(value.get(s2)) + ' ' + n2 : null));
    }
    for (const [t, s, note] of rates) {
      if (!value.has(s)) { out.push(card(t, '0', note)); continue; }
      // Between two reads; on the first, the average since the agent started.
      const before = prev ? prev.values.get(s) ?? 0 : 0;
      const secs = prev ? (now - prev.at) / 1000 : (serverNow() - Date.parse(a.started)) / 1000;
      const rate = secs > 0.5 ? Math.max(0, value.get(s) - before) / secs : 0;
      out.push(card(t, rate < 10 ? rate.toFixed(1) : num(Math.round(rate)), note,
        num(value.get(s)) + (prev ? ' in all' : ' in all; since start')));
    }
    prev = {at: now, values: value};
    replace(cards, out);
    drawSeries();
  }, signal, {wait: '15s', refresh: true});
}

function card(titleText, value, ...notes) {
  return h('div', {class: 'card'}, h('div', {class: 'card-title'}, titleText), h('div', {class: 'card-value'}, value),
    notes.filter(Boolean).map((n) => h('div', {class: 'muted'}, n)));
}
