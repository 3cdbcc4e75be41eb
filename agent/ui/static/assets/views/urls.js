// urls.js renders Dubbo URLs: the address and path, then every parameter
// as a row of a table. All of it is text; secrets are redacted by parseURL.
import {h, badge} from '../dom.js';
import {parseURL} from '../fmt.js';

// The parameters people look for first; the rest follow by name.
const first = ['application', 'version', 'group', 'side', 'methods', 'category', 'dynamic', 'enabled', 'rule'];

export function urlCard(raw) {
  const u = parseURL(raw);
  const params = [...u.params].sort(([a], [b]) => {
    const ia = first.indexOf(a), ib = first.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : a > b ? 1 : 0);
  });
  return h('div', {class: 'url' + (u.dynamic ? '' : ' static')},
    h('div', {class: 'url-head'}, h('span', {class: 'mono'}, u.protocol + '://' + (u.user ? u.user + '@' : '') + u.address),
      u.path ? h('span', {class: 'mono muted'}, ' /' + u.path) : null,
      u.dynamic ? null : [' ', badge('rule'), h('span', {class: 'muted'}, ' dynamic=false: a cluster-wide rule')]),
    params.length ? h('table', {class: 'params'}, h('tbody', null, params.map(([k, v]) =>
      h('tr', null, h('th', null, k), h('td', {class: 'mono'}, k === 'methods' ? v.split(',').join(', ') : v))))) : null,
    h('details', null, h('summary', null, 'full URL'), h('code', {class: 'raw'}, u.shown)));
}
