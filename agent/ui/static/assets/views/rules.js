// Cluster-wide rules: Dubbo dynamic=false URLs (routers, configurators)
// and RocketMQ KV config, in the order they were written. Later writes to
// the same key win by (Lamport time, writer).
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
      select('Kind', [['', 'all kinds'], ['url', 'Dubbo rules'], ['kv', 'RocketMQ KV config']], (v) => { kind = v; draw(); })),
    body);

  function draw() {
    const shown = all.filter((r) => (!kind || r.kind === kind) &&
      matches(q, r.writer, r.interface, r.category, r.url, r.namespace, r.name, r.value));
    const rows = shown.map((r, i) => h('tr', null,
      h('td', {class: 'num'}, i + 1), h('td', {class: 'num'}, r.time),
      h('td', null, r.writer.split('@')[0], h('div', {class: 'mono muted small'}, 'incarnation ' + (r.writer.split('@')[1] || '?'))),
      r.kind === 'url'
        ? [h('td', null, 'Dubbo ' + r.category), h('td', null, r.interface), h('td', null, urlCard(r.url))]
        : [h('td', null, 'KV config'), h('td', null, r.namespace + ' / ' + r.name), h('td', {class: 'mono'}, redact(r.name, r.value))]));
    replace(body, rows.length ? table(['#', 'Lamport time', 'Writer', 'Kind', 'Applies to', 'Rule'], rows, {id: 'rules'})
      : h('p', {class: 'empty'}, all.length ? 'No rule matches.' : 'No rules.'));
  }

  watch({rules: '/v1/rules'}, (d) => { all = d.rules.body.rules; draw(); }, signal);
}
