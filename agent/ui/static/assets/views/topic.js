// One topic: its brokers in the order clients get them (nearest first, by
// the estimated round trip to the agent each broker registered through).
import {h, replace, link, table} from '../dom.js';
import {watch} from '../live.js';
import {perm, ms} from '../fmt.js';
import {section} from '../widgets.js';

export default function topic({main, signal, title, args: [name]}) {
  title(name);
  const body = h('div');
  replace(main, h('p', {class: 'crumbs'}, h('a', {href: '/ui/topics'}, 'Topics'), ' / '),
    h('h1', null, name), body);
  watch({
    route: '/v1/topics/' + encodeURIComponent(name),
    brokers: '/v1/brokers',
    coords: '/v1/coordinates',
  }, (d) => {
    if (d.route.status === 404) {
      replace(body, h('p', {class: 'empty'}, 'No live broker registers this topic. This page updates when one does.'));
      return;
    }
    const rtt = new Map(d.coords.body.map((c) => [c.name, c.rttMs]));
    const origin = new Map(d.brokers.body.brokers.map((b) => [b.brokerName + '/' + b.brokerId, b.origin]));
    const queues = new Map(d.route.body.queueDatas.map((qd) => [qd.brokerName, qd]));
    const rows = d.route.body.brokerDatas.map((bd, i) => {
      const ids = Object.keys(bd.brokerAddrs).map(Number).sort((a, b) => a - b);
      const via = origin.get(bd.brokerName + '/' + (ids.includes(0) ? 0 : ids[0])) || '?';
      const qd = queues.get(bd.brokerName) || {};
      return h('tr', {'data-broker': bd.brokerName},
        h('td', {class: 'num'}, i + 1), h('td', null, bd.brokerName), h('td', null, bd.cluster),
        h('td', {class: 'mono'}, ids.map((id) => h('div', null, (id === 0 ? 'master ' : 'slave ' + id + ' ') + bd.brokerAddrs[id]))),
        h('td', {class: 'via'}, via), h('td', {class: 'num'}, ms(rtt.get(via))),
        h('td', {class: 'num'}, qd.readQueueNums), h('td', {class: 'num'}, qd.writeQueueNums), h('td', {class: 'mono'}, perm(qd.perm)));
    });
    replace(body, section('Brokers, in the order clients get them',
      h('p', {class: 'muted'}, 'Nearest first by the estimated round trip from this agent to the agent each broker registered through.'),
      table(['#', 'Broker', 'Cluster', 'Addresses', 'Registered through', 'RTT', 'Read', 'Write', 'Perm'], rows, {id: 'route'})));
  }, signal, {wait: '15s', refresh: true});
}
