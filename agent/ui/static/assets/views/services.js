// Services: every interface with a registered URL, with its provider and
// consumer counts, applications and versions (as Dubbo Admin's service
// search).
import {h, replace, link, table} from '../dom.js';
import {watch} from '../live.js';
import {num, matches, enc} from '../fmt.js';
import {searchBox} from '../widgets.js';

export default function services({main, signal, title}) {
  title('Services');
  let all = [];
  let q = new URLSearchParams(location.search).get('q') || '';
  const count = h('span', {class: 'muted'});
  const list = h('div');
  replace(main, h('h1', null, 'Services ', count),
    h('div', {class: 'filters'}, searchBox('Filter by interface, application or version', (v) => { q = v; draw(); })), list);

  function draw() {
    const shown = all.filter((s) => matches(q, s.interface, ...s.applications, ...s.versions));
    replace(count, num(shown.length));
    replace(list, shown.length ? table(['Interface', 'Providers', 'Consumers', 'Applications', 'Versions'], shown.slice(0, 2000).map((s) =>
      h('tr', {'data-service': s.interface}, h('td', null, link('/ui/services/' + enc(s.interface), s.interface)),
        h('td', {class: 'num'}, num(s.providers)), h('td', {class: 'num'}, num(s.consumers)),
        h('td', null, s.applications.join(', ')), h('td', {class: 'mono'}, s.versions.join(', ')))), {id: 'services'})
      : h('p', {class: 'empty'}, all.length ? 'No interface matches.' : 'No services registered yet.'));
  }

  watch({services: '/v1/services?detail'}, (d) => { all = d.services.body.services; draw(); }, signal);
}
