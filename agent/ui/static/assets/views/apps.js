// Applications: Dubbo 3's application-level discovery. Each application
// with its instance count and the interfaces its mapping names.
import {h, replace, link, table} from '../dom.js';
import {watch} from '../live.js';
import {num, matches, enc} from '../fmt.js';
import {searchBox} from '../widgets.js';

export default function apps({main, signal, title}) {
  title('Applications');
  let all = [];
  let q = new URLSearchParams(location.search).get('q') || '';
  const count = h('span', {class: 'muted'});
  const list = h('div');
  replace(main, h('h1', null, 'Applications ', count),
    h('p', {class: 'muted'}, 'Dubbo 3 providers registered by application (/services/{app} in ZooKeeper, or over HTTP).'),
    h('div', {class: 'filters'}, searchBox('Filter applications or interfaces', (v) => { q = v; draw(); })), list);

  function draw() {
    const shown = all.filter((a) => matches(q, a.name, ...a.interfaces));
    replace(count, num(shown.length));
    replace(list, shown.length ? table(['Application', 'Instances', 'Interfaces'], shown.slice(0, 2000).map((a) => h('tr', {'data-app': a.name},
      h('td', null, link('/ui/apps/' + enc(a.name), a.name)),
      h('td', {class: 'num'}, num(a.instances)),
      h('td', null, a.interfaces.length ? a.interfaces.map((i, n) => [n ? ', ' : '', link('/ui/services/' + enc(i), i)]) : h('span', {class: 'muted'}, '—')),
    )), {id: 'apps'})
      : h('p', {class: 'empty'}, all.length ? 'No application matches.' : 'No applications registered yet.'));
  }

  watch({apps: '/v1/apps'}, (d) => { all = d.apps.body.apps; draw(); }, signal);
}
