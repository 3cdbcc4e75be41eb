// Topics: every topic with a route, with the clusters and broker groups
// that serve it, its queues and permissions (as RocketMQ Dashboard's topic
// list). Lists can be long (10,000 topics), so only the first rows matching
// the filter are built, more on request.
import {h, replace, link, table} from '../dom.js';
import {watch} from '../live.js';
import {num, matches, enc, perm} from '../fmt.js';
import {searchBox} from '../widgets.js';

const PAGE = 500;

// RocketMQ's own topics: retry and dead-letter queues, and the system ones.
const system = /^(%RETRY%|%DLQ%|RMQ_SYS_|rmq_sys_|SCHEDULE_TOPIC|TBW102$|SELF_TEST_TOPIC$|OFFSET_MOVED_EVENT$|BenchmarkTest$|TRANS_CHECK_MAX_TIME_TOPIC$)/;

export default function topics({main, signal, title}) {
  title('Topics');
  let all = [];
  let q = new URLSearchParams(location.search).get('q') || '';
  let showSystem = false;
  let limit = PAGE;
  const count = h('span', {class: 'muted'});
  const list = h('div');
  const sys = h('input', {type: 'checkbox', id: 'sys', onchange: () => { showSystem = sys.checked; limit = PAGE; draw(); }});
  replace(main, h('h1', null, 'Topics ', count),
    h('div', {class: 'filters'}, searchBox('Filter topics', (v) => { q = v; limit = PAGE; draw(); }),
      h('label', null, sys, ' system topics')),
    list);

  function draw() {
    const shown = all.filter((t) => (showSystem || !system.test(t.topic)) && matches(q, t.topic, ...t.clusters, ...t.brokers));
    replace(count, num(shown.length) + (shown.length === all.length ? '' : ' of ' + num(all.length)));
    if (!shown.length) {
      replace(list, h('p', {class: 'empty'}, all.length ? 'No topic matches.' : 'No topics yet: register a broker.'));
      return;
    }
    const more = shown.length - limit;
    replace(list, table(['Topic', 'Cluster', 'Broker groups', 'Queues (read / write)', 'Perm'], shown.slice(0, limit).map((t) =>
      h('tr', {'data-topic': t.topic}, h('td', null, link('/ui/topics/' + enc(t.topic), t.topic)),
        h('td', null, t.clusters.join(', ')), h('td', null, t.brokers.join(', ')),
        h('td', {class: 'num'}, num(t.readQueues) + ' / ' + num(t.writeQueues)),
        h('td', {class: 'mono'}, t.perms.map(perm).join(' ')))), {id: 'topics'}),
    more > 0 ? h('button', {type: 'button', onclick: () => { limit += PAGE * 4; draw(); }},
      'Show more (' + num(more) + ' not shown)') : null);
  }

  watch({topics: '/v1/topics?detail'}, (d) => { all = d.topics.body.topics; draw(); }, signal);
}
