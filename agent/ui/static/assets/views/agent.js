// This agent: version, uptime, addresses, configuration (secrets redacted
// by the agent), and the gossip and API figures from /metrics.
import {h, replace, table} from '../dom.js';
import {watch} from '../live.js';
import {parseMetrics, num, matches, REDACTED} from '../fmt.js';
import {searchBox, section} from '../widgets.js';

export default function agent({main, signal, title}) {
  title('Agent');
  let data = null;
  let q = new URLSearchParams(location.search).get('q') || '';
  const body = h('div');
  const figures = h('div');
  replace(main, h('h1', null, 'This agent'), body,
    section('Gossip and API figures', h('p', {class: 'muted'}, 'From /metrics (timings in ms; http_get includes blocking queries); refreshed when the cluster changes, and every 15 s at most.'),
      h('div', {class: 'filters'}, searchBox('Filter metrics (e.g. http, memberlist, gossip)', (v) => { q = v; drawFigures(); })), figures));

  function drawFigures() {
    if (!data) return;
    const rows = parseMetrics(data.metrics.body)
      .filter((m) => m.name.startsWith('namecast_') && matches(q, m.name, m.labels))
      .map((m) => h('tr', null, h('td', {class: 'mono'}, m.name.replace(/^namecast_/, '')),
        h('td', {class: 'mono muted'}, m.labels), h('td', {class: 'num'}, num(m.value))));
    replace(figures, rows.length ? table(['Series', 'Labels', 'Value'], rows, {id: 'metrics'}) : h('p', {class: 'empty'}, 'No series match.'));
  }

  watch({
    health: '/v1/health',
    info: '/v1/agent',
    metrics: '/metrics',
  }, (d) => {
    data = d;
    const a = d.info.body;
    const facts = [
      ['Node', a.node], ['Version', a.version + ' (' + a.goVersion + ')'], ['Status', d.health.body.status + (a.ready ? ', synced' : ', syncing')],
      ['Started', new Date(a.started).toLocaleString() + ' (up ' + a.uptime + ')'], ['Incarnation', a.incarnation],
      ['Gossip', a.gossipAddr], ['HTTP API', a.httpAddr], ['RocketMQ', a.rocketmqAddr || 'off'],
    ];
    const cfg = Object.entries(a.config || {}).map(([k, v]) => h('tr', null, h('th', null, k),
      h('td', {class: v === REDACTED ? 'mono redacted' : 'mono'}, v === '' || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v))));
    replace(body, h('table', {class: 'facts'}, h('tbody', null, facts.map(([k, v]) => h('tr', null, h('th', null, k), h('td', null, v))))),
      section('Configuration', h('p', {class: 'muted'}, 'As flags or the config file set it; secrets are redacted by the agent.'),
        table(['Setting', 'Value'], cfg, {id: 'config'})));
    drawFigures();
  }, signal, {wait: '15s', refresh: true});
}
