// One interface: its providers, consumers, routers and configurators.
import {h, replace, link} from '../dom.js';
import {watch} from '../live.js';
import {matches, num, enc} from '../fmt.js';
import {searchBox, section} from '../widgets.js';
import {urlCard} from './urls.js';

const categories = ['providers', 'consumers', 'routers', 'configurators'];

export default function service({main, signal, title, args: [iface]}) {
  title(iface);
  let data = null;
  let q = new URLSearchParams(location.search).get('q') || '';
  const body = h('div');
  replace(main, h('p', {class: 'crumbs'}, h('a', {href: '/ui/services'}, 'Services'), ' / '),
    h('h1', null, iface),
    h('div', {class: 'filters'}, searchBox('Filter URLs (address, application, version, …)', (v) => { q = v; draw(); })), body);

  function draw() {
    if (!data) return;
    const apps = data.apps.status === 404 ? [] : data.apps.body.apps;
    if (categories.every((c) => data[c].status === 404) && !apps.length) {
      replace(body, h('p', {class: 'empty'}, 'Nothing is registered for this interface. This page updates when something is.'));
      return;
    }
    // Dubbo 3 providers registered by application: the applications the
    // interface's mapping names.
    const appSection = h('section', {id: 'apps'}, h('h2', null, 'applications ', h('span', {class: 'muted'}, num(apps.length))),
      apps.length ? h('ul', {class: 'names'}, apps.map((a) => h('li', null, link('/ui/apps/' + enc(a), a))))
        : h('p', {class: 'muted'}, 'None: no application-level provider maps this interface.'));
    replace(body, appSection, categories.map((c) => {
      const urls = data[c].status === 404 ? [] : data[c].body.urls;
      const shown = urls.filter((u) => matches(q, u));
      return h('section', {id: c}, h('h2', null, c + ' ', h('span', {class: 'muted'}, num(shown.length))),
        shown.length ? shown.map(urlCard) : h('p', {class: 'muted'}, urls.length ? 'None matches.' : 'None.'));
    }));
  }

  const sources = {apps: '/v1/services/' + encodeURIComponent(iface) + '/apps'};
  for (const c of categories) {
    sources[c] = '/v1/services/' + encodeURIComponent(iface) + '?category=' + c;
  }
  watch(sources, (d) => { data = d; draw(); }, signal);
}
