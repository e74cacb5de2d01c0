// gpuwarden dashboard (docs/dashboard.md): small vanilla JS, hand-drawn SVG, no framework and no
// CDN, because a compute node has no internet. Every string from the API reaches the DOM through
// textContent or an attribute that is not a URL, never as HTML: GPU names, process names, kernel-log
// lines and incident summaries are untrusted.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const LIVE_WINDOW_MS = 10 * 60 * 1000; // the cards' charts: the last ten minutes
const CARD_FIELDS = [
  { key: 'gpu_util', label: 'utilisation %', min: 0, max: 100 },
  { key: 'fb_used', label: 'memory used MiB', min: 0, maxKey: 'fb_total' },
  { key: 'gpu_temp', label: 'temperature °C' },
  { key: 'power_usage', label: 'power W', min: 0 },
];
// What the cards show: after one full poll (every field, for the history view's choices) the
// polls ask for these only.
const POLL_FIELDS = 'gpu_util,fb_used,fb_total,gpu_temp,power_usage,sm_clock,mem_clock';
const RANGES = { '1h': 3600, '6h': 6 * 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };

const state = {
  interval: 1000,
  history: true,
  cards: new Map(), // uuid -> {root, refs, series: {key: [[t, v]]}, latest}
  historyRange: '1h',
  healthEvery: 5000,
  lastHealth: 0,
  incidentsShown: '',
  topologyShown: false,
  historyAt: 0,
  full: false, // the last poll asked for every field
};

// --- DOM helpers: text only ------------------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function svgEl(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
  return e;
}
function byId(id) {
  return document.getElementById(id);
}
// A CSS class from an API word: letters, digits and dashes only.
function cls(word) {
  return String(word || '').toLowerCase().replace(/[^a-z0-9-]/g, '');
}
function isIndex(v) {
  return typeof v === 'number' && v >= 0;
}
function fmtNum(v, digits) {
  if (v === null || v === undefined || !isFinite(v)) return '–';
  const d = digits === undefined ? (Math.abs(v) >= 100 || Number.isInteger(v) ? 0 : 1) : digits;
  return Number(v).toFixed(d);
}
function fmtTime(ms) {
  const d = new Date(ms);
  return d.toLocaleString(undefined, { hour12: false });
}
function fmtClock(ms, span) {
  const d = new Date(ms);
  if (span > 2 * 86400 * 1000) return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  return d.toLocaleTimeString(undefined, { hour12: false, hour: '2-digit', minute: '2-digit' });
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    body = null;
  }
  if (!r.ok) throw new Error((body && body.error) || path + ': HTTP ' + r.status);
  return body;
}

function setStatus(text, bad) {
  const s = byId('status');
  s.textContent = text;
  s.className = bad ? 'badge fatal' : 'muted';
}

// --- charts ----------------------------------------------------------------------------------

// Draws series (arrays of [t_ms, value]) into a new <svg>. opts: width, height, t0, t1, min, max,
// marks (t_ms of dashed vertical lines), gap (ms: a longer pause between points breaks the line),
// compact (a card's small chart: no time labels, the caption says the window).
function chart(seriesList, opts) {
  const W = opts.width || 300, H = opts.height || 90, R = 4, T = 6;
  const L = opts.compact ? 30 : 34, B = opts.compact ? 4 : 16;
  const svg = svgEl('svg', { class: 'plot', viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
  if (opts.title) {
    const t = svgEl('title', {});
    t.textContent = opts.title;
    svg.appendChild(t);
  }
  let lo = opts.min, hi = opts.max;
  let t0 = opts.t0, t1 = opts.t1;
  for (const s of seriesList)
    for (const p of s) {
      if (lo === undefined || p[1] < lo) lo = p[1];
      if (hi === undefined || p[1] > hi) hi = p[1];
      if (t0 === undefined || p[0] < t0) t0 = p[0];
      if (t1 === undefined || p[0] > t1) t1 = p[0];
    }
  if (lo === undefined) lo = 0;
  if (hi === undefined || hi <= lo) hi = lo + 1;
  if (t0 === undefined) t0 = Date.now() - 60000;
  if (t1 === undefined || t1 <= t0) t1 = t0 + 1;
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  svg.appendChild(svgEl('path', { class: 'axis', d: 'M' + L + ' ' + T + 'V' + (H - B) + 'H' + (W - R) }));
  const tick = (tx, ty, text, anchor) => {
    const e = svgEl('text', { class: 'tick', x: tx, y: ty, 'text-anchor': anchor });
    e.textContent = text;
    svg.appendChild(e);
  };
  // Axis labels short enough for a card: 81559 is 82k.
  const short = (v) => (Math.abs(v) >= 10000 ? fmtNum(v / 1000, 0) + 'k' : fmtNum(v));
  tick(L - 3, T + 8, short(hi), 'end');
  tick(L - 3, H - B, short(lo), 'end');
  if (!opts.compact) {
    tick(L, H - 3, fmtClock(t0, t1 - t0), 'start');
    tick(W - R, H - 3, fmtClock(t1, t1 - t0), 'end');
  }
  seriesList.forEach((s, i) => {
    if (!s.length) return;
    let d = '', prev = null;
    for (const p of s) {
      if (p[0] < t0 || p[0] > t1 || p[1] === null || !isFinite(p[1])) continue;
      const jump = prev === null || (opts.gap && p[0] - prev > opts.gap);
      d += (jump ? 'M' : 'L') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1);
      prev = p[0];
    }
    if (d) svg.appendChild(svgEl('path', { class: 'line s' + (i % 4), d: d, 'data-points': s.length }));
  });
  for (const m of opts.marks || [])
    if (m >= t0 && m <= t1) svg.appendChild(svgEl('line', { class: 'mark', x1: x(m), x2: x(m), y1: T, y2: H - B }));
  return svg;
}

// --- GPU cards -------------------------------------------------------------------------------

function fieldMap(latest) {
  const m = {};
  for (const f of latest.fields || []) m[f.key] = f.value;
  return m;
}

function gpuLabel(g) {
  return g.parent_uuid ? 'MIG ' + (g.mig_profile || '') + ' gi ' + g.gpu_instance_id : 'GPU ' + g.index;
}

function makeCard(entry) {
  const g = entry.gpu;
  const root = el('article', 'card');
  root.dataset.uuid = g.uuid;
  const head = el('div', 'card-head');
  const title = el('h3', null, gpuLabel(g));
  const name = el('span', 'muted gpu-name', g.name);
  const st = el('span', 'badge');
  const idle = el('span', 'badge idle', 'idle while peers busy');
  idle.hidden = true;
  const health = el('span', 'badge');
  health.hidden = true;
  head.append(title, name, st, idle, health);
  const uuid = el('div', 'mono uuid', g.uuid);
  const metrics = el('div', 'metrics');
  const refs = { st, idle, health, values: {}, charts: {} };
  for (const [key, label] of [
    ['gpu_util', 'util %'], ['mem', 'memory MiB'], ['gpu_temp', 'temp °C'],
    ['power_usage', 'power W'], ['sm_clock', 'SM MHz'], ['mem_clock', 'mem MHz'],
  ]) {
    const m = el('div', 'metric');
    const b = el('b', null, '–');
    m.append(b, el('span', null, label));
    metrics.appendChild(m);
    refs.values[key] = b;
  }
  const charts = el('div', 'charts');
  for (const f of CARD_FIELDS) {
    const c = el('div', 'chart');
    c.dataset.field = f.key;
    c.append(el('div', 'label', f.label));
    const holder = el('div');
    c.appendChild(holder);
    charts.appendChild(c);
    refs.charts[f.key] = holder;
  }
  root.append(head, uuid, metrics, charts);
  if (g.parent_uuid) root.classList.add('mig');
  return { root, refs, series: {}, latest: null, loaded: false, allFields: [] };
}

function updateCard(card, entry) {
  const g = entry.gpu, v = fieldMap(entry);
  card.latest = entry;
  if (state.full) card.allFields = (entry.fields || []).map((f) => ({ key: f.key, unit: f.unit }));
  card.refs.st.textContent = g.state;
  card.refs.st.className = 'badge ' + cls(g.state);
  card.root.classList.toggle('down', g.state !== 'up');
  card.refs.idle.hidden = !entry.idle_while_peers_busy;
  card.root.classList.toggle('idle-peers', !!entry.idle_while_peers_busy);
  const r = card.refs.values;
  r.gpu_util.textContent = fmtNum(v.gpu_util, 0);
  r.mem.textContent = fmtNum(v.fb_used, 0) + ' / ' + fmtNum(v.fb_total, 0);
  r.gpu_temp.textContent = fmtNum(v.gpu_temp, 0);
  r.power_usage.textContent = fmtNum(v.power_usage, 0);
  r.sm_clock.textContent = fmtNum(v.sm_clock, 0);
  r.mem_clock.textContent = fmtNum(v.mem_clock, 0);
  // Append the new samples to the live series.
  for (const f of entry.fields || []) {
    if (!CARD_FIELDS.some((c) => c.key === f.key)) continue;
    const s = card.series[f.key] || (card.series[f.key] = []);
    if (!s.length || s[s.length - 1][0] < f.timestamp_ms) s.push([f.timestamp_ms, f.value]);
  }
  drawCardCharts(card);
}

function drawCardCharts(card) {
  const now = Date.now(), v = card.latest ? fieldMap(card.latest) : {};
  for (const f of CARD_FIELDS) {
    const s = card.series[f.key] || [];
    while (s.length && s[0][0] < now - LIVE_WINDOW_MS) s.shift();
    const holder = clear(card.refs.charts[f.key]);
    if (!(f.key in v) && !s.length) {
      holder.appendChild(el('div', 'empty', 'not reported'));
      continue;
    }
    holder.appendChild(
      chart([s], {
        t0: now - LIVE_WINDOW_MS, t1: now, min: f.min, max: f.maxKey ? v[f.maxKey] : f.max,
        gap: Math.max(5000, state.interval * 5), title: f.label + ', last 10 minutes',
        width: 160, height: 60, compact: true,
      })
    );
  }
}

// The last minutes of each card's charts, once, from the history store; the polls extend them.
async function loadCardHistory(card) {
  card.loaded = true;
  if (!state.history) return;
  const have = fieldMap(card.latest);
  const step = Math.max(1, Math.round(state.interval / 1000)) + 's';
  await Promise.all(
    CARD_FIELDS.filter((f) => f.key in have).map(async (f) => {
      try {
        const h = await api('api/v1/history?gpu=' + encodeURIComponent(card.root.dataset.uuid) +
          '&field=' + f.key + '&since=10m&step=' + step);
        const live = card.series[f.key] || [];
        const first = live.length ? live[0][0] : Infinity;
        card.series[f.key] = h.points.filter((p) => p[0] < first).concat(live);
      } catch (e) {
        // The live series still fills from the polls.
      }
    })
  );
  drawCardCharts(card);
}

async function pollLatest() {
  state.full = !state.cards.size || [...state.cards.values()].some((c) => !c.allFields.length);
  const d = await api(state.full ? 'api/v1/latest' : 'api/v1/latest?fields=' + POLL_FIELDS);
  state.interval = Math.min(60000, Math.max(250, d.sample_interval_ms || 1000));
  state.history = d.history !== false;
  byId('host').textContent = d.hostname || '';
  document.title = 'gpuwarden ' + (d.hostname || '');
  const box = byId('gpus');
  const seen = new Set();
  for (const entry of d.gpus) {
    const uuid = entry.gpu.uuid;
    seen.add(uuid);
    let card = state.cards.get(uuid);
    if (!card) {
      if (!state.full) continue; // a new device: shown after the next (full) poll
      card = makeCard(entry);
      state.cards.set(uuid, card);
      box.appendChild(card.root);
    }
    updateCard(card, entry);
    if (!card.loaded) loadCardHistory(card);
  }
  for (const [uuid, card] of state.cards)
    if (!seen.has(uuid)) {
      card.root.remove();
      state.cards.delete(uuid);
    }
  const full = d.gpus.filter((e) => !e.gpu.parent_uuid).length;
  byId('gpu-count').textContent = full + ' GPUs' + (d.gpus.length > full ? ', ' + (d.gpus.length - full) + ' MIG devices' : '');
  fillHistoryChoices(d);
}

// --- health: incidents, events, diag ---------------------------------------------------------

function incidentView(i) {
  const box = el('article', 'incident ' + cls(i.severity));
  box.dataset.id = i.id;
  const head = el('div', 'card-head');
  head.append(el('span', 'badge ' + cls(i.severity), i.severity), el('h3', null, '#' + i.id + ' ' + i.rule),
    el('span', 'muted', (isIndex(i.gpu_index) ? 'GPU ' + i.gpu_index + ' · ' : '') + 'opened ' + fmtTime(i.opened_ms) +
      ' · ' + i.occurrences + '× · ' + i.status));
  box.append(head, el('p', 'summary', i.summary));
  if (i.action) box.append(el('p', 'action', 'Action: ' + i.action));
  const ctx = i.context || {};
  const keys = Object.keys(ctx.series || {}).filter((k) => Array.isArray(ctx.series[k]) && ctx.series[k].length).sort();
  // The snapshot's own clock: taken when the incident opened, over the window before it.
  const taken = ctx.taken_ms || i.opened_ms, win = ctx.window_ms || 60000;
  const moment = (ctx.at && ctx.at.t_ms) || taken;
  if (keys.length) {
    box.append(el('div', 'label muted', 'The ' + Math.round(win / 1000) + ' s before it opened; dashed: the moment.'));
    const charts = el('div', 'charts context');
    for (const k of keys) {
      const s = ctx.series[k] || [];
      const c = el('div', 'chart');
      c.dataset.field = k;
      const at = ctx.at && k in ctx.at ? ' = ' + fmtNum(ctx.at[k]) : '';
      c.append(el('div', 'label', k + at));
      c.append(chart([s], { t0: taken - win, t1: taken, marks: [moment], title: k }));
      charts.appendChild(c);
    }
    box.appendChild(charts);
  }
  return box;
}

function showIncidents(list, healthByUuid) {
  const key = JSON.stringify(list.map((i) => [i.id, i.updated_ms, i.status]));
  byId('incident-count').textContent = '(' + list.length + ')';
  if (key !== state.incidentsShown) {
    state.incidentsShown = key;
    const box = clear(byId('incidents'));
    if (!list.length) box.appendChild(el('p', 'empty', 'No open incidents.'));
    for (const i of list) box.appendChild(incidentView(i));
  }
  for (const [uuid, card] of state.cards) {
    const h = healthByUuid.get(uuid) || healthByUuid.get(card.latest && card.latest.gpu.parent_uuid);
    card.refs.health.hidden = !h || h === 'healthy';
    card.refs.health.textContent = 'health: ' + (h || '');
    card.refs.health.className = 'badge ' + cls(h);
  }
}

function showEvents(d) {
  const now = Date.now(), t0 = now - 86400000;
  const events = d.events || [];
  const tl = clear(byId('events-timeline'));
  const W = 900, H = 70, L = 10, R = 10;
  const svg = svgEl('svg', { class: 'plot timeline', viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
  svg.appendChild(svgEl('path', { class: 'axis', d: 'M' + L + ' ' + (H - 16) + 'H' + (W - R) }));
  for (const [t, anchor] of [[t0, 'start'], [now, 'end']]) {
    const e = svgEl('text', { class: 'tick', x: t === now ? W - R : L, y: H - 3, 'text-anchor': anchor });
    e.textContent = fmtClock(t, 0);
    svg.appendChild(e);
  }
  for (const e of events) {
    const x = L + ((e.ts_ms - t0) / (now - t0)) * (W - L - R);
    const row = isIndex(e.gpu) ? e.gpu % 8 : 8;
    const dot = svgEl('circle', { class: 'dot ' + (e.kind === 'xid' || e.kind === 'sxid' ? 'xid' : 'other'), cx: x.toFixed(1), cy: 6 + row * 5, r: 3 });
    const title = svgEl('title', {});
    title.textContent = fmtTime(e.ts_ms) + ' ' + e.kind + ' ' + (e.code !== undefined ? e.code : '') + ' GPU ' + e.gpu;
    dot.appendChild(title);
    svg.appendChild(dot);
  }
  tl.appendChild(svg);
  const body = clear(byId('events').tBodies[0]);
  const newest = events.slice(-100).reverse();
  if (!newest.length) {
    const tr = el('tr');
    const td = el('td', 'empty', 'No events in the last 24 h.');
    td.colSpan = 7;
    tr.appendChild(td);
    body.appendChild(tr);
  }
  for (const e of newest) {
    const tr = el('tr');
    tr.append(el('td', null, fmtTime(e.ts_ms)), el('td', null, isIndex(e.gpu) ? e.gpu : '–'), el('td', null, e.kind),
      el('td', null, e.code !== undefined ? e.code : ''), el('td', null, e.source), el('td', 'process', e.process || ''),
      el('td', 'msg', e.message || e.raw || ''));
    body.appendChild(tr);
  }
}

function showDiag(d) {
  const body = clear(byId('diag').tBodies[0]);
  if (!d.reports.length) {
    const tr = el('tr');
    const td = el('td', 'empty', 'No reports: run `gpuwarden diag` on the node.');
    td.colSpan = 5;
    tr.appendChild(td);
    body.appendChild(tr);
  }
  for (const r of d.reports) {
    const tr = el('tr');
    const verdict = el('td');
    verdict.appendChild(el('span', 'badge ' + cls(r.overall), r.overall || r.error || '?'));
    tr.append(el('td', 'mono', r.name), el('td', null, r.time), el('td', null, r.level), verdict, el('td', null, r.driver_version || '–'));
    body.appendChild(tr);
  }
}

async function pollHealth() {
  const [health, incidents, events, diag] = await Promise.all([
    api('api/v1/health'), api('api/v1/incidents?state=open'), api('api/v1/events?since=24h&limit=500'), api('api/v1/diag'),
  ]);
  const o = byId('overall');
  o.textContent = health.status;
  o.className = 'badge ' + cls(health.status);
  const byUuid = new Map();
  for (const g of health.gpus || []) byUuid.set(g.uuid, g.state);
  showIncidents(incidents.incidents || [], byUuid);
  showEvents(events);
  showDiag(diag);
}

// --- topology --------------------------------------------------------------------------------

async function loadTopology() {
  // The matrix is read with the inventory: ask once the inventory is there (no 503 in the console).
  const g = await api('api/v1/gpus');
  if (!g.gpus.length || g.gpus.some((x) => x.inventory === null)) return;
  const t = await api('api/v1/topology');
  const table = clear(byId('topology'));
  const head = el('tr');
  head.appendChild(el('th'));
  for (const g of t.gpus) head.appendChild(el('th', null, 'GPU' + g.index));
  head.append(el('th', null, 'CPU affinity'), el('th', null, 'NUMA'));
  table.appendChild(head);
  for (const g of t.gpus) {
    const tr = el('tr');
    tr.appendChild(el('th', null, 'GPU' + g.index));
    for (const c of g.links) {
      const kind = c.startsWith('NV') ? 'nv' : c === 'PIX' || c === 'PXB' ? 'pci' : c === 'X' ? '' : 'sys';
      const td = el('td', kind, c);
      const meaning = t.legend && (t.legend[c] || (c.startsWith('NV') && t.legend['NV#']));
      if (meaning) td.title = meaning;
      tr.appendChild(td);
    }
    tr.append(el('td', 'mono', g.cpu_affinity || 'N/A'), el('td', 'mono', g.numa_affinity || 'N/A'));
    table.appendChild(tr);
  }
  const w = clear(byId('topology-warnings'));
  for (const text of t.warnings || []) w.appendChild(el('li', null, text));
  state.topologyShown = true;
}

// --- history view ----------------------------------------------------------------------------

function fillHistoryChoices(d) {
  const sel = byId('history-gpu');
  const want = d.gpus.map((e) => e.gpu.uuid).join(',');
  if (sel.dataset.list !== want) {
    const keep = sel.value;
    clear(sel);
    for (const e of d.gpus) {
      const o = el('option', null, gpuLabel(e.gpu) + ' · ' + e.gpu.uuid);
      o.value = e.gpu.uuid;
      sel.appendChild(o);
    }
    sel.dataset.list = want;
    if (keep && want.split(',').includes(keep)) sel.value = keep;
    fillFields();
  }
}

function fillFields() {
  const card = state.cards.get(byId('history-gpu').value);
  const sel = byId('history-field');
  const keep = sel.value || 'gpu_util';
  clear(sel);
  for (const f of (card && card.allFields) || []) {
    const o = el('option', null, f.key + (f.unit ? ' (' + f.unit + ')' : ''));
    o.value = f.key;
    sel.appendChild(o);
  }
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  drawHistory();
}

async function drawHistory() {
  const uuid = byId('history-gpu').value, field = byId('history-field').value;
  const box = byId('history-chart');
  if (!uuid || !field) return;
  if (!state.history) {
    clear(box).appendChild(el('p', 'empty', 'History is off on this agent.'));
    return;
  }
  const range = RANGES[state.historyRange];
  const step = Math.max(1, Math.ceil(range / 600)) + 's'; // about 600 points, well under the 11 000 cap
  const ask = uuid + field + state.historyRange;
  box.dataset.asked = ask;
  state.historyAt = Date.now();
  try {
    const h = await api('api/v1/history?gpu=' + encodeURIComponent(uuid) + '&field=' + encodeURIComponent(field) +
      '&since=' + state.historyRange + '&step=' + step);
    if (box.dataset.asked !== ask) return; // a newer choice won
    clear(box).appendChild(chart([h.points], {
      width: 900, height: 220, t0: h.since_ms, t1: h.until_ms, gap: Math.ceil(range / 600) * 3000,
      min: h.points.some((p) => p[1] < 0) ? undefined : 0,
      title: field + ' over ' + state.historyRange,
    }));
    if (!h.points.length) box.appendChild(el('p', 'empty', 'No samples in this range.'));
  } catch (e) {
    clear(box).appendChild(el('p', 'empty', e.message));
  }
}

function setupHistory() {
  const ranges = byId('history-ranges');
  for (const r of Object.keys(RANGES)) {
    const b = el('button', r === state.historyRange ? 'on' : '', r);
    b.type = 'button';
    b.dataset.range = r;
    b.addEventListener('click', () => {
      state.historyRange = r;
      for (const o of ranges.children) o.classList.toggle('on', o.dataset.range === r);
      drawHistory();
    });
    ranges.appendChild(b);
  }
  byId('history-gpu').addEventListener('change', fillFields);
  byId('history-field').addEventListener('change', drawHistory);
}

// --- the loop: poll at the agent's sampling interval -----------------------------------------

async function tick() {
  try {
    await pollLatest();
    const now = Date.now();
    if (now - state.lastHealth >= Math.max(state.healthEvery, state.interval)) {
      state.lastHealth = now;
      await pollHealth();
    }
    // The history view follows too, once per step of its range (at most every 5 s).
    const step = Math.max(5000, Math.ceil(RANGES[state.historyRange] / 600) * 1000);
    if (now - (state.historyAt || now) >= step) drawHistory();
    if (!state.topologyShown) await loadTopology().catch(() => {});
    setStatus('updated ' + new Date().toLocaleTimeString(undefined, { hour12: false }) + ' · every ' + state.interval / 1000 + ' s');
  } catch (e) {
    setStatus('cannot reach the agent: ' + e.message, true);
  }
  setTimeout(tick, state.interval);
}

document.addEventListener('DOMContentLoaded', () => {
  setupHistory();
  tick();
});
