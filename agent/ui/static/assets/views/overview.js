// The overview: this agent's health, the cluster's counts, and the changes
// seen since the page opened (the API keeps no history, so neither do we).
import {h, replace, link, badge} from '../dom.js';
import {watch} from '../live.js';
import {num, plural} from '../fmt.js';
import {section} from '../widgets.js';

export default function overview({main, signal, title}) {
  title('Overview');
  const changes = [];
  let prev = null;
  watch({
    members: '/v1/members',
    topics: '/v1/topics',
    services: '/v1/services',
    origins: '/v1/origins',
    health: '/v1/health',
    agent: '/v1/agent',
    clusters: '/v1/clusters',
  }, (d) => {
    const members = d.members.body;
    const now = {
      members: new Map(members.map((m) => [m.name, m.status])),
      topics: new Set(d.topics.body.topics),
      services: new Set(d.services.body.services),
    };
    if (prev) diff(prev, now, changes);
    prev = now;
    const by = (s) => members.filter((m) => m.status === s).length;
    const health = d.health.body;
    const cfg = d.agent.body.config || {};
    const brokers = Object.keys(d.clusters.body.brokerAddrTable || {}).length;
    const rules = (d.origins.body.find((o) => o.origin === '~rules') || {records: 0}).records;
    const records = d.origins.body.reduce((n, o) => n + o.records, 0);
    replace(main,
      h('h1', null, 'Overview'),
      h('div', {class: 'cards'},
        card('Agent', health.node, badge(health.status), health.ready ? 'synced' : 'syncing'),
        card('Cluster', h('span', {class: 'small-value'}, cfg.cluster || '(no label)'), d.agent.body.version, 'profile ' + (cfg.profile || '')),
        card(link('/ui/members', 'Members'), num(by('alive')) + ' alive', by('dead') + ' dead', by('left') + ' left'),
        card(link('/ui/topics', 'Topics'), num(now.topics.size), plural(brokers, 'broker group'), link('/ui/clusters', 'clusters')),
        card(link('/ui/services', 'Services'), num(now.services.size), 'interfaces'),
        card(link('/ui/rules', 'Rules'), num(rules), 'cluster-wide'),
        card('Records', num(records), 'in this agent\'s copy of the table')),
      section('Recent changes',
        changes.length ? h('ul', {class: 'changes'}, changes.map((c) => h('li', null,
          h('time', null, c.at.toLocaleTimeString()), ' ', c.what, ' ', c.name ? c.path ? link(c.path, c.name) : c.name : '')))
          : h('p', {class: 'muted'}, 'None since this page opened; it updates as the cluster changes.')));
  }, signal);
}

function card(titleEl, value, ...notes) {
  return h('div', {class: 'card'}, h('div', {class: 'card-title'}, titleEl), h('div', {class: 'card-value'}, value),
    notes.map((n) => h('div', {class: 'muted'}, n)));
}

function diff(prev, now, changes) {
  const at = new Date();
  const add = (what, name, path) => changes.unshift({at, what, name, path});
  for (const [name, st] of now.members) {
    if (!prev.members.has(name)) add('member joined:', name, '/ui/members');
    else if (prev.members.get(name) !== st) add('member ' + st + ':', name, '/ui/members');
  }
  for (const t of now.topics) if (!prev.topics.has(t)) add('topic added:', t, '/ui/topics/' + encodeURIComponent(t));
  for (const t of prev.topics) if (!now.topics.has(t)) add('topic removed:', t);
  for (const s of now.services) if (!prev.services.has(s)) add('service added:', s, '/ui/services/' + encodeURIComponent(s));
  for (const s of prev.services) if (!now.services.has(s)) add('service removed:', s);
  changes.splice(30);
}
