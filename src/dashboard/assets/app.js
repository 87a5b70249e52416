/* global document, window, location, fetch, EventSource, Node */
// The dashboard page: the certificate list, the timeline and one certificate's page, rendered
// from the backend's JSON and kept current by its server-sent events (no reloads). Every value
// is inserted as text, never as HTML.
const STATE_LABELS = { ready: 'Ready', renewing: 'Renewing', 'backing-off': 'Backing off', failed: 'Failed', expiring: 'Expiring', 'not-ready': 'Not ready' };
const view = document.getElementById('view');
const title = document.getElementById('page-title');
const connection = document.getElementById('connection');

let snapshot;
const filters = { namespace: '', issuer: '', state: '', sort: 'expiry-asc' };
let detailToken = 0;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    // through the CSSOM: the Content-Security-Policy refuses style attributes
    else if (k === 'style') el.style.cssText = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function relative(ms) {
  const abs = Math.abs(ms);
  const [n, unit] = abs >= 86_400_000 ? [abs / 86_400_000, 'd'] : abs >= 3_600_000 ? [abs / 3_600_000, 'h'] : abs >= 60_000 ? [abs / 60_000, 'min'] : [abs / 1000, 's'];
  const text = `${Math.round(n)} ${unit}`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

function time(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const text = `${d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`;
  return h('time', { datetime: iso, title: relative(d.getTime() - Date.now()) }, text, h('span', { class: 'muted' }, ` (${relative(d.getTime() - Date.now())})`));
}

const badge = (state) => h('span', { class: `state state-${state}`, 'data-state': state }, STATE_LABELS[state] ?? state);
const certHref = (c) => `#/certificates/${encodeURIComponent(c.namespace)}/${encodeURIComponent(c.name)}`;

function setConnection(state, text) {
  connection.dataset.connection = state;
  connection.textContent = text;
}

function filtered() {
  if (!snapshot) return [];
  const rows = snapshot.certificates.filter((c) =>
    (!filters.namespace || c.namespace === filters.namespace) &&
    (!filters.issuer || `${c.issuer.kind}/${c.issuer.name}` === filters.issuer) &&
    (!filters.state || c.states.includes(filters.state)));
  // certificates not issued yet have no expiry: last in either direction
  const expiry = (c) => (c.timeline.notAfter ? Date.parse(c.timeline.notAfter) : undefined);
  const byExpiry = (a, b) => {
    const [x, y] = [expiry(a), expiry(b)];
    if (x === undefined || y === undefined) return (x === undefined) - (y === undefined);
    return filters.sort === 'expiry-desc' ? y - x : x - y;
  };
  rows.sort((a, b) => byExpiry(a, b) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return rows;
}

function select(id, label, value, options, onChange) {
  return h('label', { for: id }, label,
    h('select', { id, name: id, onchange: (e) => onChange(e.target.value) },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
}

function filterForm() {
  const all = snapshot?.certificates ?? [];
  const namespaces = [...new Set(all.map((c) => c.namespace))].sort();
  const issuers = [...new Set(all.map((c) => `${c.issuer.kind}/${c.issuer.name}`))].sort();
  const rerender = () => render();
  return h('form', { class: 'filters', 'aria-label': 'Filter certificates', onsubmit: (e) => e.preventDefault() },
    select('filter-namespace', 'Namespace', filters.namespace, [['', 'All namespaces'], ...namespaces.map((n) => [n, n])], (v) => { filters.namespace = v; rerender(); }),
    select('filter-issuer', 'Issuer', filters.issuer, [['', 'All issuers'], ...issuers.map((i) => [i, i])], (v) => { filters.issuer = v; rerender(); }),
    select('filter-state', 'State', filters.state, [['', 'All states'], ...Object.entries(STATE_LABELS)], (v) => { filters.state = v; rerender(); }),
    select('sort', 'Sort by expiry', filters.sort, [['expiry-asc', 'Expires soonest first'], ['expiry-desc', 'Expires latest first']], (v) => { filters.sort = v; rerender(); }));
}

function listView() {
  title.textContent = 'Certificates';
  const rows = filtered();
  const sortDir = filters.sort === 'expiry-desc' ? 'descending' : 'ascending';
  const toggle = () => { filters.sort = filters.sort === 'expiry-asc' ? 'expiry-desc' : 'expiry-asc'; render(); document.getElementById('sort-expiry')?.focus(); };
  return [
    filterForm(),
    h('p', { id: 'count', role: 'status' }, `${rows.length} of ${snapshot?.certificates.length ?? 0} certificates`),
    h('table', { id: 'certificates' },
      h('caption', {}, 'Certificates, with their state, expiry and next renewal'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Namespace'), h('th', { scope: 'col' }, 'Issuer'),
        h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Why'),
        h('th', { scope: 'col', 'aria-sort': sortDir }, h('button', { type: 'button', id: 'sort-expiry', onclick: toggle }, 'Expires')),
        h('th', { scope: 'col' }, 'Renews'), h('th', { scope: 'col' }, 'Next attempt'))),
      h('tbody', {}, rows.map((c) => h('tr', { 'data-certificate': `${c.namespace}/${c.name}`, 'data-state': c.state, 'data-revision': c.revision ?? '' },
        h('th', { scope: 'row' }, h('a', { href: certHref(c) }, c.name)),
        h('td', {}, c.namespace),
        h('td', {}, `${c.issuer.kind}/${c.issuer.name}`),
        h('td', {}, c.states.map(badge).flatMap((b, i) => (i ? [' ', b] : [b]))),
        h('td', {}, c.why ? `${c.why.reason ?? ''}${c.why.message ? `: ${c.why.message}` : ''}` : ''),
        h('td', {}, time(c.timeline.notAfter)),
        h('td', {}, time(c.timeline.renewalTime)),
        h('td', {}, c.timeline.nextAttempt ? time(c.timeline.nextAttempt) : h('span', { class: 'muted' }, '—')))))),
  ];
}

/** One certificate's validity, renewal point, windows, failures and next attempt on one bar. */
function track(c) {
  const t = c.timeline;
  const now = Date.now();
  const points = [t.notBefore, t.notAfter, t.renewalTime, t.lastFailureTime, t.nextAttempt, t.renewalWindow?.start, t.renewalWindow?.end, t.ari?.start, t.ari?.end]
    .filter(Boolean).map((x) => Date.parse(x)).filter((x) => !Number.isNaN(x));
  points.push(now);
  const lo = Math.min(...points);
  const hi = Math.max(...points, lo + 60_000);
  const pos = (iso) => `${(((Date.parse(iso) - lo) / (hi - lo)) * 100).toFixed(3)}%`;
  const span = (cls, a, b, label) => h('div', { class: cls, style: `left:${pos(a)};width:calc(${pos(b)} - ${pos(a)})`, title: label });
  const mark = (cls, iso, label) => h('div', { class: `mark ${cls}`, style: `left:${pos(iso)}`, title: label });
  const nowIso = new Date(now).toISOString();
  return h('div', { class: 'track', 'aria-hidden': 'true' },
    t.notBefore && t.notAfter ? span('validity', t.notBefore, t.notAfter, 'validity') : null,
    t.renewalWindow ? span('window', t.renewalWindow.start, t.renewalWindow.end, 'renewal window') : null,
    t.ari?.start && t.ari?.end ? span('ari', t.ari.start, t.ari.end, 'ARI suggested window') : null,
    t.renewalTime ? mark('renewal', t.renewalTime, 'renewal time') : null,
    t.lastFailureTime ? mark('failure', t.lastFailureTime, 'last failure') : null,
    t.nextAttempt ? mark('next', t.nextAttempt, 'next attempt') : null,
    mark('now', nowIso, 'now'));
}

function timelineFacts(c) {
  const t = c.timeline;
  const facts = [
    ['Valid from', time(t.notBefore)], ['Valid until', time(t.notAfter)], ['Renewal time', time(t.renewalTime)],
    ['Why then', t.renewalReason],
  ];
  if (t.renewalWindow) facts.push(['Renewal window', [time(t.renewalWindow.start), ' – ', time(t.renewalWindow.end), ` (${t.renewalWindow.label})`]]);
  if (t.renewalWindows.length) facts.push(['Maintenance windows', `${t.renewalPolicy ?? 'RenewBefore'}: ${t.renewalWindows.map((w) => `"${w.cron}"${w.duration ? ` for ${w.duration}` : ''}${w.timeZone ? ` in ${w.timeZone}` : ''}`).join('; ')}`]);
  if (t.windowsProblem) facts.push(['Windows problem', h('span', { class: 'problem' }, t.windowsProblem)]);
  if (t.ari) {
    facts.push(['ARI window', t.ari.start ? [time(t.ari.start), ' – ', time(t.ari.end)] : 'none']);
    if (t.ari.explanationURL) facts.push(['ARI explanation', t.ari.explanationURL]);
    if (t.ari.lastError) facts.push(['ARI error', h('span', { class: 'problem' }, t.ari.lastError)]);
  }
  if (t.lastFailureTime) {
    facts.push(['Failed attempts', String(t.failedAttempts)], ['Last failure', time(t.lastFailureTime)], ['Next attempt', time(t.nextAttempt)]);
  }
  return h('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

const legend = () => h('ul', { class: 'legend', 'aria-hidden': 'true' },
  h('li', {}, h('span', { style: 'background:#7fb3e6' }), 'validity'), h('li', {}, h('span', { style: 'background:#0b4fa8' }), 'renewal time'),
  h('li', {}, h('span', { style: 'background:rgba(17,99,41,.4)' }), 'renewal window'), h('li', {}, h('span', { style: 'background:rgba(122,65,0,.35)' }), 'ARI window'),
  h('li', {}, h('span', { style: 'background:#a40e26' }), 'last failure'), h('li', {}, h('span', { style: 'background:#7a4100' }), 'next attempt'),
  h('li', {}, h('span', { style: 'background:#1b1f24' }), 'now'));

function timelineView() {
  title.textContent = 'Timeline';
  const rows = filtered();
  return [filterForm(), legend(), h('p', { id: 'count', role: 'status' }, `${rows.length} of ${snapshot?.certificates.length ?? 0} certificates`),
    h('div', { id: 'timeline' }, rows.map((c) => h('section', { class: 'timeline-row', 'data-certificate': `${c.namespace}/${c.name}`, 'data-state': c.state, 'aria-labelledby': `tl-${c.namespace}-${c.name}` },
      h('h2', { id: `tl-${c.namespace}-${c.name}` }, h('a', { href: certHref(c) }, `${c.namespace}/${c.name}`), ' ', badge(c.state)),
      track(c), timelineFacts(c))))];
}

function table(caption, headers, rows, attrs = {}) {
  if (!rows.length) return h('p', { class: 'muted' }, `No ${caption.toLowerCase()}.`);
  return h('table', attrs, h('caption', {}, caption), h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((cell, i) => (i === 0 ? h('th', { scope: 'row' }, cell) : h('td', {}, cell)))))));
}

function detailView(d) {
  title.textContent = `Certificate ${d.namespace}/${d.name}`;
  const out = [h('p', {}, h('a', { href: '#/' }, '← All certificates'))];
  out.push(h('section', { 'aria-labelledby': 'h-summary' }, h('h2', { id: 'h-summary' }, 'Summary'),
    h('dl', { class: 'facts', id: 'summary' },
      h('dt', {}, 'State'), h('dd', { id: 'detail-state' }, d.states.map(badge).flatMap((b, i) => (i ? [' ', b] : [b]))),
      h('dt', {}, 'Issuer'), h('dd', {}, `${d.issuer.kind}/${d.issuer.name}`),
      h('dt', {}, 'Secret'), h('dd', {}, d.secretName),
      h('dt', {}, 'Names'), h('dd', {}, d.names.join(', ') || '—'),
      h('dt', {}, 'Revision'), h('dd', { id: 'detail-revision' }, d.revision ?? '—'))));
  out.push(h('section', { 'aria-labelledby': 'h-renewal' }, h('h2', { id: 'h-renewal' }, 'Next renewal'),
    h('p', { id: 'renewal-reason' }, d.timeline.renewalReason), track(d), timelineFacts(d)));
  out.push(h('section', { 'aria-labelledby': 'h-conditions' }, h('h2', { id: 'h-conditions' }, 'Conditions'),
    table('Conditions', ['Type', 'Status', 'Reason', 'Message', 'Since'], d.conditions.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '', time(c.lastTransitionTime)]), { id: 'conditions' })));
  const leaf = d.leaf;
  out.push(h('section', { 'aria-labelledby': 'h-leaf' }, h('h2', { id: 'h-leaf' }, 'Certificate in the Secret'),
    leaf ? h('dl', { class: 'facts', id: 'leaf' },
      [['Subject', leaf.subject], ['Issuer', leaf.issuer], ['Serial number', leaf.serialNumber], ['Not before', time(leaf.notBefore)], ['Not after', time(leaf.notAfter)],
        ['Signature algorithm', leaf.signatureAlgorithm], ['Public key SHA-256', leaf.publicKeyFingerprint],
        ['Names', [...leaf.dnsNames, ...leaf.ipAddresses, ...leaf.uris, ...leaf.emailAddresses].join(', ') || '—'], ['CA', leaf.isCA ? 'yes' : 'no']]
        .flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))
      : h('p', { class: 'muted' }, d.leafProblem ?? 'No certificate yet.')));
  out.push(h('section', { 'aria-labelledby': 'h-chain', id: 'chain' }, h('h2', { id: 'h-chain' }, 'Requests, orders and challenges'),
    d.requests.length ? d.requests.map((r) => h('div', { class: 'chain', 'data-request': r.name },
      h('h3', {}, `CertificateRequest ${r.name}`, r.revision ? ` (revision ${r.revision})` : ''),
      h('p', {}, r.approved ? `${r.approved}. ` : '', r.ready ? `Ready ${r.ready.status}${r.ready.reason ? `, ${r.ready.reason}` : ''}${r.ready.message ? `: ${r.ready.message}` : ''}` : 'No Ready condition yet.'),
      r.orders.map((o) => h('div', { class: 'chain', 'data-order': o.name, 'data-order-state': o.state ?? '' },
        h('h3', {}, `Order ${o.name}: ${o.state ?? 'pending'}`),
        o.reason ? h('p', { class: o.state === 'valid' ? '' : 'problem' }, `ACME: ${o.reason}`) : null,
        o.failureTime ? h('p', {}, 'Failed at ', time(o.failureTime)) : null,
        table('Challenges', ['Challenge', 'Type', 'Name', 'State', 'Presented', 'Self-check or ACME result'],
          o.challenges.map((c) => [c.name, c.type ?? '', `${c.wildcard ? '*.' : ''}${c.dnsName ?? ''}`, c.state || (c.processing ? 'processing' : 'pending'), c.presented ? 'yes' : 'no', c.reason ?? '']),
          { class: 'challenges' })))))
      : h('p', { class: 'muted' }, 'No CertificateRequest for this Certificate.')));
  out.push(h('section', { 'aria-labelledby': 'h-hooks' }, h('h2', { id: 'h-hooks' }, 'Deploy hooks and files'),
    d.deployHooks.filesMirrored ? h('p', {}, `FilesMirrored ${d.deployHooks.filesMirrored.status}: ${d.deployHooks.filesMirrored.reason ?? ''} ${d.deployHooks.filesMirrored.message ?? ''}`) : null,
    table('Deploy hook outcomes', ['Reason', 'Type', 'Message', 'When'], d.deployHooks.events.map((e) => [e.reason ?? '', e.type ?? '', e.message ?? '', time(e.lastTimestamp)]))));
  out.push(h('section', { 'aria-labelledby': 'h-revisions' }, h('h2', { id: 'h-revisions' }, 'Revisions'),
    table('Revisions', ['Revision', 'CertificateRequest', 'Created', 'Outcome'], d.requests.map((r) => [r.revision ?? '?', r.name, time(r.created), r.ready ? `${r.ready.reason ?? r.ready.status}` : 'pending']), { id: 'revisions' })));
  out.push(h('section', { 'aria-labelledby': 'h-events' }, h('h2', { id: 'h-events' }, 'Events'),
    table('Events', ['Reason', 'Type', 'Object', 'Message', 'Count', 'Last seen'], d.events.map((e) => [e.reason ?? '', e.type ?? '', e.object, e.message ?? '', String(e.count), time(e.lastTimestamp)]), { id: 'events' })));
  return out;
}

function route() {
  const m = /^#\/certificates\/([^/]+)\/([^/]+)$/.exec(location.hash);
  // a hand-typed or linked hash with a bad escape shows the list, not a blank page
  try {
    if (m) return { page: 'detail', namespace: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) };
  } catch {
    return { page: 'list' };
  }
  if (location.hash === '#/timeline') return { page: 'timeline' };
  return { page: 'list' };
}

async function renderDetail(r) {
  const token = ++detailToken;
  let body;
  try {
    const res = await fetch(`/api/certificates/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`, { headers: { Accept: 'application/json' } });
    body = res.ok ? detailView(await res.json()) : [h('p', { class: 'problem' }, (await res.json()).message)];
  } catch (e) {
    body = [h('p', { class: 'problem' }, `Cannot load the certificate: ${e.message}`)];
  }
  if (token !== detailToken) return; // a newer render started meanwhile
  view.replaceChildren(...body);
  view.dataset.version = String(snapshot?.version ?? '');
}

function render() {
  const r = route();
  document.getElementById('nav-list').toggleAttribute('aria-current', r.page === 'list');
  document.getElementById('nav-timeline').toggleAttribute('aria-current', r.page === 'timeline');
  if (r.page === 'list') document.getElementById('nav-list').setAttribute('aria-current', 'page');
  if (r.page === 'timeline') document.getElementById('nav-timeline').setAttribute('aria-current', 'page');
  if (r.page === 'detail') return renderDetail(r);
  detailToken++;
  // keep keyboard focus on the control that changed the list
  const focused = document.activeElement?.id;
  view.replaceChildren(...(r.page === 'timeline' ? timelineView() : listView()));
  view.dataset.version = String(snapshot?.version ?? '');
  if (focused) document.getElementById(focused)?.focus();
}

/** Renders at most once a frame however fast lists and changes arrive (thousands issuing at once). */
let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  window.requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function showUpstream() {
  if (snapshot.upstream?.reachable === false) setConnection('upstream-down', `The API server does not answer (${snapshot.upstream.problem ?? 'no answer'}); showing what was last seen, retrying…`);
  else setConnection('live', 'Live');
}

const rowKey = (c) => `${c.namespace}/${c.name}`;
const byNamespaceAndName = (a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Applies one change list to the list held; false when it does not continue it (a missed message). */
function applyChanges(changes) {
  if (!snapshot || changes.from !== snapshot.version) return false;
  const rows = new Map(snapshot.certificates.map((c) => [rowKey(c), c]));
  for (const r of changes.removed) rows.delete(rowKey(r));
  for (const c of changes.upserted) rows.set(rowKey(c), c);
  const listChanged = changes.removed.length > 0 || changes.upserted.length > 0 || JSON.stringify(changes.upstream) !== JSON.stringify(snapshot.upstream);
  snapshot = {
    version: changes.version, generatedAt: changes.generatedAt, upstream: changes.upstream,
    certificates: listChanged ? [...rows.values()].sort(byNamespaceAndName) : snapshot.certificates,
  };
  // a certificate's page shows its orders, challenges and events too: it reloads on every change
  if (listChanged || route().page === 'detail') scheduleRender();
  else view.dataset.version = String(snapshot.version);
  return true;
}

function connect() {
  const source = new EventSource('/api/stream');
  source.addEventListener('open', () => setConnection('live', 'Live'));
  source.addEventListener('snapshot', (e) => {
    snapshot = JSON.parse(e.data);
    showUpstream();
    scheduleRender();
  });
  source.addEventListener('changes', (e) => {
    if (applyChanges(JSON.parse(e.data))) return showUpstream();
    // never guess: start again from the whole list
    source.close();
    setConnection('reconnecting', 'Reconnecting to the server…');
    connect();
  });
  // EventSource reconnects by itself; the first message after that is the whole current list
  source.addEventListener('error', () => setConnection('reconnecting', 'Reconnecting to the server…'));
}

window.addEventListener('hashchange', () => {
  render();
  document.getElementById('main').focus();
});
connect();
