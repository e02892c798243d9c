// report_page.js: the script of `ctpu report`'s page (docs/report.md). Reads the JSON data
// element written by traces/html_page.c, builds one Vega-Lite spec per plot the data allow
// and renders them with vega-embed. When every plot has rendered, #ctpu-status lists each
// plot's box on the page and its mark colours ("plot ID X Y W H #rrggbb,..."), then
// "rendered N"; on an error it reads "error: ...". Headless checks read it (tests/test_report.c).
'use strict';
const D = JSON.parse(document.getElementById('ctpu-data').textContent);
const W = 1200;
const PAL = ['#1f77b4', '#2ca02c', '#d62728', '#9467bd', '#17becf', '#bcbd22', '#8c564b', '#e377c2'];
const num = (v) => (typeof v === 'number' ? v : 0);
const plots = [];

function add(id, title, note, spec, colors) {
  plots.push({ id, title, note, colors,
    spec: Object.assign({ $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      config: { view: { stroke: '#ddd' } } }, spec) });
}

// Layers in order of their first cycle, with an index for the x axis.
const layers = (D.layers || []).slice().sort((a, b) => num(a.start) - num(b.start))
  .map((r, i) => Object.assign({ i }, r));
const engines = layers.length ? Object.keys(layers[0]).filter((k) => k.startsWith('busy_')) : [];
const chip = D.chip;
const peakOps = 2 * chip.mxu_rows * chip.mxu_cols;

function plotLayerBusy() {
  const rows = [], stalls = Object.keys(layers[0]).filter((k) => k.startsWith('stall_'));
  for (const r of layers)
    for (const e of engines.concat(stalls)) rows.push({ i: r.i, layer: String(r.layer), engine: e.replace(/^busy_/, ''), cycles: num(r[e]) });
  const names = engines.map((e) => e.slice(5)).concat(stalls);
  const colors = PAL.slice(0, engines.length).concat(['#8c564b', '#ff7f0e', '#e377c2'].slice(0, stalls.length));
  add('layers', 'Per-layer cycles: busy by engine, stalled by reason',
    'one bar per layer in order of its first cycle; engine cycles summed over the engines, so a bar may exceed the layer\'s span (per-layer CSV)', {
    width: W, height: 260, data: { values: rows }, mark: { type: 'bar' },
    encoding: {
      x: { field: 'i', type: 'ordinal', title: 'layer (order of start)', axis: { labelOverlap: true, labelAngle: 0 } },
      y: { field: 'cycles', type: 'quantitative', aggregate: 'sum', title: 'engine cycles' },
      color: { field: 'engine', type: 'nominal', title: 'busy / stall', scale: { domain: names, range: colors } },
      order: { field: 'k', type: 'quantitative' },
      tooltip: [{ field: 'layer' }, { field: 'engine' }, { field: 'cycles', aggregate: 'sum' }] },
    transform: [{ calculate: 'indexof(' + JSON.stringify(names) + ', datum.engine)', as: 'k' }] },
  ['load0', 'mxu', 'stall_ddr'].filter((n) => names.includes(n)).map((n) => colors[names.indexOf(n)]));
}

function plotEngines() {
  const states = ['busy', 'bank_conflict', 'ddr', 'semaphore', 'queue_full', 'idle'];
  const colors = ['#2ca02c', '#d62728', '#ff7f0e', '#9467bd', '#e377c2', '#c7c7c7'];
  const rows = [];
  for (const [name, e] of Object.entries(D.summary.engines)) {
    rows.push({ engine: name, state: 'busy', cycles: num(e.busy) }, { engine: name, state: 'idle', cycles: num(e.idle) });
    for (const [s, c] of Object.entries(e.stall || {})) rows.push({ engine: name, state: s, cycles: num(c) });
  }
  add('engines', 'Engine cycles: busy, stalled by reason, idle', 'summary JSON; busy + stalls + idle = total cycles', {
    width: W, height: 30 * Object.keys(D.summary.engines).length, data: { values: rows }, mark: 'bar',
    encoding: {
      y: { field: 'engine', type: 'nominal', sort: null }, x: { field: 'cycles', type: 'quantitative', title: 'cycles' },
      color: { field: 'state', type: 'nominal', scale: { domain: states, range: colors } },
      order: { field: 'state_order', type: 'quantitative' }, tooltip: [{ field: 'engine' }, { field: 'state' }, { field: 'cycles' }] },
    transform: [{ calculate: 'indexof(' + JSON.stringify(states) + ', datum.state)', as: 'state_order' }] }, [colors[0], colors[2], colors[3]]);
}

// MXU utilization and DDR bytes per cycle in nb time bins: each layer's MACs and DDR bytes
// spread evenly over its span [start, end).
function plotTimeline() {
  const total = D.summary ? num(D.summary.total_cycles) : Math.max(...layers.map((r) => num(r.end)));
  const nb = 200, bw = Math.max(1, total / nb), macs = new Array(nb).fill(0), bytes = new Array(nb).fill(0);
  for (const r of layers) {
    const s = num(r.start), e = num(r.end);
    if (e <= s) continue;
    for (let b = Math.floor(s / bw); b < nb && b * bw < e; b++) {
      const f = (Math.min(e, (b + 1) * bw) - Math.max(s, b * bw)) / (e - s);
      macs[b] += f * num(r.macs), bytes[b] += f * (num(r.ddr_bytes_read) + num(r.ddr_bytes_written));
    }
  }
  const rows = macs.map((m, b) => ({ cycle: b * bw, util: m / (chip.mxu_rows * chip.mxu_cols * bw), ddr: bytes[b] / bw }));
  const line = (field, title, color, roof) => ({
    width: W, height: 160,
    layer: [{ mark: { type: 'line', color, strokeWidth: 2, interpolate: 'step-after' },
      encoding: { x: { field: 'cycle', type: 'quantitative', title: 'cycle' }, y: { field, type: 'quantitative', title } } },
    { mark: { type: 'rule', color: '#555', strokeDash: [4, 4] }, encoding: { y: { datum: roof } } }] });
  add('timeline', 'MXU utilization and DDR bandwidth over time',
    `${nb} bins of ${Math.round(bw)} cycles; each layer's MACs and DDR bytes spread over its span (per-layer CSV); dashed: the chip's peak`,
    { data: { values: rows }, vconcat: [line('util', 'MXU utilization', '#d62728', 1),
      line('ddr', 'DDR bytes / cycle', '#ff7f0e', chip.ddr_bytes_per_cycle)] }, ['#d62728', '#ff7f0e']);
}

function plotGantt() {
  const g = new Map();
  for (const r of layers) {
    if (num(r.group) < 0) continue;
    const x = g.get(r.group) || { group: r.group, start: Infinity, end: 0, n: 0 };
    x.start = Math.min(x.start, num(r.start)), x.end = Math.max(x.end, num(r.end)), x.n++;
    g.set(r.group, x);
  }
  for (const row of D.groups || []) {
    const x = g.get(row.group);
    if (x) Object.assign(x, { tile_shape: String(row.tile_shape), tiles: row.tiles, est_cycles: row.est_cycles, lmem_bytes: row.lmem_bytes });
  }
  const rows = [...g.values()];
  add('gantt', 'Layer groups over time', 'each group from the first start to the last completion of its layers (per-layer CSV; groups CSV in the tooltip)', {
    width: W, height: Math.max(120, Math.min(900, 9 * rows.length)), data: { values: rows }, mark: { type: 'bar', color: '#1f77b4' },
    encoding: { y: { field: 'group', type: 'ordinal', axis: { labelOverlap: true } },
      x: { field: 'start', type: 'quantitative', title: 'cycle' }, x2: { field: 'end' },
      tooltip: ['group', 'n', 'start', 'end', 'tile_shape', 'tiles', 'est_cycles', 'lmem_bytes'].map((f) => ({ field: f })) } },
  ['#1f77b4']);
}

function plotRoofline() {
  const pts = layers.filter((r) => num(r.macs) > 0 && num(r.cycles) > 0 && num(r.ddr_bytes_read) + num(r.ddr_bytes_written) > 0)
    .map((r) => ({ layer: String(r.layer), intensity: 2 * r.macs / (r.ddr_bytes_read + r.ddr_bytes_written), perf: 2 * r.macs / r.cycles }));
  const ridge = peakOps / chip.ddr_bytes_per_cycle, xs = pts.map((p) => p.intensity).concat([ridge]);
  const lo = Math.min(...xs) / 4, hi = Math.max(...xs) * 4, roof = [];
  for (let k = 0; k <= 64; k++) {
    const x = lo * Math.pow(hi / lo, k / 64);
    roof.push({ intensity: x, perf: Math.min(peakOps, chip.ddr_bytes_per_cycle * x) });
  }
  const skipped = layers.length - pts.length;
  add('roofline', 'Roofline per layer',
    `ops = 2 · MACs; intensity = ops / DDR bytes; roofs: ${peakOps} ops/cycle (MXU ${chip.mxu_rows}×${chip.mxu_cols}), ` +
    `${chip.ddr_bytes_per_cycle} DDR bytes/cycle; ${skipped} layers without MACs or without DDR traffic (inside a group) not shown`, {
      width: W, height: 320,
      encoding: { x: { field: 'intensity', type: 'quantitative', scale: { type: 'log' }, title: 'ops / DDR byte' },
        y: { field: 'perf', type: 'quantitative', scale: { type: 'log' }, title: 'ops / cycle' } },
      layer: [{ data: { values: roof }, mark: { type: 'line', color: '#333', strokeWidth: 2 } },
        { data: { values: pts }, mark: { type: 'point', filled: true, opacity: 1, size: 50, color: '#9467bd' },
          encoding: { tooltip: [{ field: 'layer' }, { field: 'intensity' }, { field: 'perf' }] } }] }, ['#9467bd']);
}

function plotAccuracy() {
  const rows = D.compare.map((r, i) => Object.assign({ i }, r));
  const chart = (field, title, color, mark) => ({ width: W, height: 160, mark: Object.assign({ color }, mark),
    encoding: { x: { field: 'i', type: 'ordinal', title: 'tensor (order of the compare table)', axis: { labelOverlap: true, labelAngle: 0 } },
      y: { field, type: 'quantitative', title, scale: { zero: false } },
      tooltip: [{ field: 'name' }, { field: 'verdict' }, { field: 'cosine' }, { field: 'sqnr_db' }] } });
  add('accuracy', 'Accuracy per layer', 'cosine similarity and SQNR of each tensor against the reference (compare table; equal tensors have no SQNR)', {
    data: { values: rows }, vconcat: [chart('cosine', 'cosine', '#2ca02c', { type: 'line', point: { filled: true, color: '#2ca02c' } }),
      chart('sqnr_db', 'SQNR (dB)', '#1f77b4', { type: 'bar' })] }, ['#2ca02c', '#1f77b4']);
}

// Marks each sweep row on the Pareto front of its model (fewest cycles for at most its x).
function pareto(rows, xf) {
  const byModel = new Map();
  for (const r of rows) (byModel.get(r.model) || byModel.set(r.model, []).get(r.model)).push(r);
  let n = 0;
  for (const rs of byModel.values()) {
    rs.sort((a, b) => a[xf] - b[xf] || a.cycles - b.cycles);
    let best = Infinity;
    for (const r of rs) if ((r['front_' + xf] = r.cycles < best)) best = r.cycles, n++;
  }
  return n;
}

// The sweep's point rows (level "point" when the CSV has levels) with numbers for the axes:
// cycles (or sim_cycles); LMEM bytes: the swept key lmem.bytes, else lmem_bytes, else the
// chip's; MXU size: mxu_size, else mxu.rows · mxu.cols (the chip's for a key not swept).
function sweepPoints() {
  const v = (r, ...ks) => ks.map((k) => r[k]).find((x) => typeof x === 'number');
  return D.sweep.filter((r) => !('level' in r) || r.level === 'point').map((r) => Object.assign({}, r, {
    model: String(r.model), cycles: v(r, 'cycles', 'sim_cycles'), lmem: v(r, 'lmem.bytes', 'lmem_bytes') ?? chip.lmem_bytes,
    mxu: v(r, 'mxu_size') ?? (v(r, 'mxu.rows') ?? chip.mxu_rows) * (v(r, 'mxu.cols') ?? chip.mxu_cols) }))
    .filter((r) => r.cycles > 0 && r.lmem > 0 && r.mxu > 0);
}

function plotPareto() {
  const rows = sweepPoints();
  if (!rows.length) return;
  const n1 = pareto(rows, 'lmem'), n2 = pareto(rows, 'mxu');
  const chart = (xf, title) => ({ width: W / 2 - 60, height: 300,
    encoding: { x: { field: xf, type: 'quantitative', scale: { type: 'log', nice: false, padding: 24 }, title },
      y: { field: 'cycles', type: 'quantitative', scale: { type: 'log', nice: false, padding: 24 }, title: 'simulated cycles' },
      color: { field: 'model', type: 'nominal', scale: { range: PAL } } },
    layer: [{ transform: [{ filter: `datum.front_${xf}` }], mark: { type: 'line', strokeWidth: 2 } },
      { mark: { type: 'point', filled: true, opacity: 1, size: 60 },
        encoding: { tooltip: Object.keys(D.sweep[0]).map((f) => ({ field: f.replace(/\./g, '\\.') })) } }] });
  add('pareto', 'Sweep: cycles against LMEM bytes and MXU size',
    `${rows.length} points; lines join each model's Pareto front (pareto lmem ${n1}, mxu ${n2})`,
    { data: { values: rows }, hconcat: [chart('lmem', 'LMEM bytes'), chart('mxu', 'MXU size (MACs per cycle)')] }, [PAL[0]]);
}

function header() {
  document.getElementById('ctpu-title').textContent = 'ctpu report: ' + D.title;
  let s = `chip ${chip.name} (MXU ${chip.mxu_rows}×${chip.mxu_cols}, ${chip.ddr_bytes_per_cycle} DDR bytes/cycle, ${chip.freq_mhz} MHz)`;
  const m = D.summary;
  if (m) s += `; ${m.total_cycles} cycles (${m.time_us} µs), MXU utilization ${num(m.mxu_utilization).toFixed(3)}, ` +
    `DDR ${m.ddr_bytes_read} bytes read, ${m.ddr_bytes_written} written`;
  s += '; files: ' + Object.entries(D.files).map(([k, f]) => `${f} (${k})`).join(', ');
  document.getElementById('ctpu-sub').textContent = s;
}

async function main() {
  header();
  if (layers.length) plotLayerBusy();
  if (D.summary) plotEngines();
  if (layers.length) plotTimeline(), plotGantt(), plotRoofline();
  if (D.compare && D.compare.length) plotAccuracy();
  if (D.sweep && D.sweep.length) plotPareto();
  const root = document.getElementById('ctpu-plots'), views = [];
  for (const p of plots) {
    const h = document.createElement('h2'), n = document.createElement('p'), div = document.createElement('div');
    h.textContent = p.title, n.textContent = p.note, n.className = 'note', div.id = 'plot-' + p.id;
    root.append(h, n, div);
    views.push(vegaEmbed(div, p.spec, { actions: false, renderer: 'canvas' }));
  }
  await Promise.all(views);
  const lines = plots.map((p) => {
    const b = document.getElementById('plot-' + p.id).getBoundingClientRect();
    return `plot ${p.id} ${Math.round(b.left + scrollX)} ${Math.round(b.top + scrollY)} ${Math.round(b.width)} ${Math.round(b.height)} ${p.colors.join(',')}`;
  });
  document.getElementById('ctpu-status').textContent = lines.concat([`rendered ${plots.length}`]).join('\n');
}

main().catch((e) => { document.getElementById('ctpu-status').textContent = 'error: ' + e; });
