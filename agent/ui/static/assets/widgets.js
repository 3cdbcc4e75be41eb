// widgets.js: pieces several views share.
import {h} from './dom.js';

// searchBox is a filter input kept in the page's ?q= so a filtered deep
// link can be shared; onInput(query) runs on every keystroke.
export function searchBox(placeholder, onInput) {
  const params = new URLSearchParams(location.search);
  const input = h('input', {type: 'search', placeholder, value: params.get('q') || '', 'aria-label': placeholder,
    oninput: () => {
      const p = new URLSearchParams(location.search);
      if (input.value) p.set('q', input.value); else p.delete('q');
      const qs = p.toString();
      history.replaceState(null, '', location.pathname + (qs ? '?' + qs : ''));
      onInput(input.value);
    }});
  return input;
}

// select is a filter drop-down: options [[value, label], ...].
export function select(label, options, onChange) {
  const el = h('select', {'aria-label': label, onchange: () => onChange(el.value)},
    options.map(([v, l]) => h('option', {value: v}, l)));
  return el;
}

export function section(title, ...children) {
  return h('section', null, h('h2', null, title), children);
}

export function notFound(what) {
  return h('p', {class: 'empty'}, what);
}
