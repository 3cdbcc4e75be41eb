// dom.js builds the page. Everything the cluster holds (topics, URLs, tags,
// names) is data from the network: it reaches the page only through text()
// — a text node — and never as HTML. Attributes are set one by one, and a
// link may only point inside the UI or at this agent's API (/v1/, /metrics).

// text renders any value as text: the one way registry strings reach the page.
export function text(v) {
  return document.createTextNode(v === undefined || v === null ? '' : String(v));
}

// h makes an element: h('td', {class: 'num'}, 'text', child, ...). Strings
// and numbers become text nodes; null and false are skipped; arrays nest.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// svg makes an SVG element the same way.
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) {
      el.addEventListener(k.slice(2), v);
      continue;
    }
    if (k === 'href' && !String(v).startsWith('/ui/') && !/^\/(v1\/|metrics$)/.test(String(v))) {
      throw new Error('link outside the UI refused: ' + v);
    }
    el.setAttribute(k, v === true ? '' : String(v));
  }
}

export function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(text(c));
  }
  return el;
}

// replace swaps el's content for children in one DOM change.
export function replace(el, ...children) {
  const frag = document.createDocumentFragment();
  append(frag, children);
  el.replaceChildren(frag);
}

// link is an anchor to a UI path built from fixed parts and encoded names.
export function link(path, label) {
  return h('a', {href: path}, label);
}

// table is a data table. Each cell is labelled with its column's header
// (data-label): on a narrow screen the stylesheet stacks every row into a
// card of label: value lines, so no column is past the right edge.
export function table(headers, rows, attrs) {
  for (const tr of rows.flat()) {
    if (!(tr instanceof Element)) continue;
    [...tr.children].forEach((td, i) => {
      if (!td.hasAttribute('data-label')) td.setAttribute('data-label', headers[i] || '');
    });
  }
  return h('div', {class: 'scroll'}, h('table', attrs,
    h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))),
    h('tbody', null, rows)));
}

export function badge(status) {
  return h('span', {class: 'badge ' + (['alive', 'dead', 'left', 'ok', 'rule'].includes(status) ? status : 'other')}, status);
}
