// Cluster-wide rules: Dubbo dynamic=false URLs (routers, configurators),
// ZooKeeper persistent nodes (Dubbo's mapping, config and metadata) and
// RocketMQ KV config, in the order they were written: every record the
// Overview counts as a rule. Later writes to the same key win by
// (Lamport time, writer).
import {h, replace, table} from '../dom.js';
import {watch} from '../live.js';
import {matches, redact} from '../fmt.js';
import {searchBox, select} from '../widgets.js';
import {urlCard} from './urls.js';

export default function rules({main, signal, title}) {
  title('Rules');
  let all = [];
  let q = new URLSearchParams(location.search).get('q') || '';
  let kind = '';
  const body = h('div');
  replace(main, h('h1', null, 'Rules'),
    h('p', {class: 'muted'}, 'Cluster-wide: written on any agent, kept by all, ordered by Lamport time then writer.'),
    h('div', {class: 'filters'}, searchBox('Filter rules', (v) => { q = v; draw(); }),
      select('Kind', [['', 'all kinds'], ['url', 'Dubbo rules'], ['znode', 'ZooKeeper persistent nodes'], ['kv', 'RocketMQ KV config']],
        (v) => { kind = v; draw(); })),
    body);

  function draw() {
    const shown = all.filter((r) => (!kind || r.kind === kind) &&
      matches(q, r.writer, r.interface, r.category, r.url, r.namespace, r.name, r.value, r.path, r.key));
    const rows = shown.map((r, i) => h('tr', null,
      h('td', {class: 'num'}, i + 1),
      // A string: Lamport times pass 2^53, past what a JavaScript number holds.
      h('td', {class: 'mono'}, String(r.time)),
      h('td', null, r.writer.split('@')[0], h('div', {class: 'mono muted small'}, 'incarnation ' + (r.writer.split('@')[1] || '?'))),
      what(r)));
    replace(body, rows.length ? table(['#', 'Lamport time', 'Writer', 'Kind', 'Applies to', 'Rule'], rows, {id: 'rules'})
      : h('p', {class: 'empty'}, all.length ? 'No rule matches.' : 'No rules.'));
  }

  watch({rules: '/v1/rules'}, (d) => { all = d.rules.body.rules; draw(); }, signal);
}

// what is a rule's kind, what it applies to, and the rule itself.
function what(r) {
  switch (r.kind) {
  case 'url':
    return [h('td', null, 'Dubbo ' + r.category), h('td', null, r.interface), h('td', null, urlCard(r.url))];
  case 'kv':
    return [h('td', null, 'KV config'), h('td', null, r.namespace + ' / ' + r.name), h('td', {class: 'mono'}, redact(r.name, r.value))];
  case 'znode': {
    const name = r.path.split('/').pop();
    return [h('td', null, 'ZooKeeper node', r.mtime ? h('div', {class: 'muted small'}, 'written ' + new Date(r.mtime).toLocaleString()) : null),
      h('td', {class: 'mono'}, r.path),
      h('td', null, r.data === undefined || r.data === null ? h('span', {class: 'muted'}, '(no data)')
        : h('div', {class: 'mono value'}, redact(name, r.data)))];
  }
  default:
    return [h('td', null, r.kind), h('td', {class: 'mono'}, r.key), h('td', {class: 'muted'}, '—')];
  }
}
