// RocketMQ clusters: cluster → broker groups → master and slaves.
import {h, replace} from '../dom.js';
import {watch} from '../live.js';
import {matches} from '../fmt.js';
import {searchBox} from '../widgets.js';

export default function clusters({main, signal, title}) {
  title('Clusters');
  let data = null;
  let q = new URLSearchParams(location.search).get('q') || '';
  const body = h('div');
  replace(main, h('h1', null, 'Clusters'),
    h('div', {class: 'filters'}, searchBox('Filter by cluster, broker or address', (v) => { q = v; draw(); })), body);

  function draw() {
    if (!data) return;
    const ci = data.clusters.body;
    const origin = new Map(data.brokers.body.brokers.map((b) => [b.brokerName + '/' + b.brokerId, b.origin]));
    const names = Object.keys(ci.clusterAddrTable || {}).sort();
    const out = [];
    for (const cluster of names) {
      const groups = ci.clusterAddrTable[cluster].map((bn) => ci.brokerAddrTable[bn]).filter((bd) => bd &&
        matches(q, cluster, bd.brokerName, ...Object.values(bd.brokerAddrs)));
      if (!groups.length) continue;
      out.push(h('section', {class: 'cluster'}, h('h2', null, cluster),
        groups.map((bd) => h('div', {class: 'group'}, h('h3', null, bd.brokerName),
          h('ul', null, Object.keys(bd.brokerAddrs).map(Number).sort((a, b) => a - b).map((id) =>
            h('li', null, h('span', {class: id === 0 ? 'role master' : 'role'}, id === 0 ? 'master' : 'slave ' + id), ' ',
              h('span', {class: 'mono'}, bd.brokerAddrs[id]), ' ',
              h('span', {class: 'muted'}, 'via ' + (origin.get(bd.brokerName + '/' + id) || '?')))))))));
    }
    replace(body, out.length ? out : h('p', {class: 'empty'}, names.length ? 'No broker matches.' : 'No brokers registered.'));
  }

  watch({clusters: '/v1/clusters', brokers: '/v1/brokers'}, (d) => { data = d; draw(); }, signal);
}
