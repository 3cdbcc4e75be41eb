// RocketMQ clusters: cluster → broker groups → master and slaves.
import {h, replace} from '../dom.js';
import {watch} from '../live.js';
import {age, matches} from '../fmt.js';
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
    const entry = new Map(data.brokers.body.brokers.map((b) => [b.brokerName + '/' + b.brokerId, b]));
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
              h('span', {class: 'muted lease'}, leaseText(entry.get(bd.brokerName + '/' + id))))))))));
    }
    replace(body, out.length ? out : h('p', {class: 'empty'}, names.length ? 'No broker matches.' : 'No brokers registered.'));
  }

  // ?leases: this agent asks each broker's holding agent for its last
  // registration and expiry, durations on that agent's own clock.
  watch({clusters: '/v1/clusters', brokers: '/v1/brokers?leases'}, (d) => { data = d; draw(); }, signal,
    {wait: '15s', refresh: true});
}

// leaseText is the agent a broker came through and what a NameServer
// knows of it, as that agent said: "via agent-2 · registered 12s ago ·
// expires in 1m 48s".
function leaseText(b) {
  if (!b) return 'via ?';
  const l = b.lease;
  if (!l) return 'via ' + b.origin + ' · registration unknown (' + b.origin + ' did not answer)';
  const reg = l.registered ? 'registered ' + age(0, l.registeredAgoMs) + ' ago' : 'registration time not recorded';
  const exp = l.expiresInMs === undefined ? 'no expiry' : 'expires in ' + age(0, Math.max(0, l.expiresInMs));
  return 'via ' + b.origin + ' · ' + reg + ' · ' + exp;
}
