// Services: every interface with a registered URL.
import {h, replace, link} from '../dom.js';
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
    h('div', {class: 'filters'}, searchBox('Filter interfaces', (v) => { q = v; draw(); })), list);

  function draw() {
    const shown = all.filter((s) => matches(q, s));
    replace(count, num(shown.length));
    replace(list, shown.length ? h('ul', {class: 'names', id: 'services'}, shown.slice(0, 2000).map((s) =>
      h('li', null, link('/ui/services/' + enc(s), s))))
      : h('p', {class: 'empty'}, all.length ? 'No interface matches.' : 'No services registered yet.'));
  }

  watch({services: '/v1/services'}, (d) => { all = d.services.body.services; draw(); }, signal);
}
