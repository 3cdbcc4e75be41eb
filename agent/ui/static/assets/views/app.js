// One application: its instances (address, revision, the agent holding
// each, metadata) and the interfaces its mapping names.
import {h, replace, link, table} from '../dom.js';
import {watch} from '../live.js';
import {num, enc} from '../fmt.js';

export default function app({main, signal, title, args: [name]}) {
  title(name);
  const body = h('div');
  replace(main, h('p', {class: 'crumbs'}, h('a', {href: '/ui/apps'}, 'Applications'), ' / '), h('h1', null, name), body);

  function draw(ans) {
    if (ans.status === 404) {
      replace(body, h('p', {class: 'empty'}, 'No instance of this application is registered. This page updates when one is.'));
      return;
    }
    const d = ans.body;
    replace(body,
      h('section', {id: 'interfaces'}, h('h2', null, 'Interfaces ', h('span', {class: 'muted'}, num(d.interfaces.length))),
        d.interfaces.length ? h('ul', {class: 'names'}, d.interfaces.map((i) => h('li', null, link('/ui/services/' + enc(i), i))))
          : h('p', {class: 'muted'}, 'No mapping names this application.')),
      h('section', {id: 'instances'}, h('h2', null, 'Instances ', h('span', {class: 'muted'}, num(d.instances.length))),
        d.instances.length ? table(['Instance', 'Address', 'Revision', 'Agent', 'Metadata'], d.instances.map((i) => h('tr', {'data-instance': i.id},
          h('td', {class: 'mono'}, i.id),
          h('td', {class: 'mono'}, i.address + ':' + i.port),
          h('td', {class: 'mono'}, i.revision || '—'),
          h('td', null, i.agent || h('span', {class: 'muted'}, 'persistent')),
          h('td', null, i.problem ? h('p', {class: 'muted'}, i.problem) : null,
            i.services && i.services.length ? h('p', null, 'exports ', i.services.join(', ')) : null,
            Object.keys(i.metadata || {}).length ? h('table', {class: 'params'}, h('tbody', null, Object.keys(i.metadata).sort().map((k) =>
              h('tr', null, h('th', null, k), h('td', {class: 'mono'}, i.metadata[k]))))) : null),
        )), {id: 'instance-list'}) : h('p', {class: 'muted'}, 'None: every instance has gone.')));
  }

  watch({app: '/v1/apps/' + encodeURIComponent(name)}, (d) => draw(d.app), signal);
}
