// Topics: every topic with a route. Lists can be long (10,000 topics), so
// only the first rows matching the filter are built, more on request.
import {h, replace, link} from '../dom.js';
import {watch} from '../live.js';
import {num, matches, enc} from '../fmt.js';
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
    const shown = all.filter((t) => (showSystem || !system.test(t)) && matches(q, t));
    replace(count, num(shown.length) + (shown.length === all.length ? '' : ' of ' + num(all.length)));
    if (!shown.length) {
      replace(list, h('p', {class: 'empty'}, all.length ? 'No topic matches.' : 'No topics yet: register a broker.'));
      return;
    }
    const more = shown.length - limit;
    replace(list, h('ul', {class: 'names', id: 'topics'}, shown.slice(0, limit).map((t) =>
      h('li', null, link('/ui/topics/' + enc(t), t)))),
    more > 0 ? h('button', {type: 'button', onclick: () => { limit += PAGE * 4; draw(); }},
      'Show more (' + num(more) + ' not shown)') : null);
  }

  watch({topics: '/v1/topics'}, (d) => { all = d.topics.body.topics; draw(); }, signal);
}
