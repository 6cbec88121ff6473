// opbench site: draws one page of the site from the data its HTML holds (the element
// #opbench-data, written by `opbench site`), with Chart.js for the charts. Three kinds of page:
// the index, a table (latest runs per GPU and each point's history) and a diff (verdicts).
// window.opbench describes what was drawn (for the site's browser test).
(function () {
  'use strict';

  const app = document.getElementById('app');
  const root = app.dataset.root || '';
  const data = JSON.parse(document.getElementById('opbench-data').textContent);
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7',
                   '#e15759', '#bab0ac', '#1b9e77', '#7570b3'];
  const GPU_DASH = [[], [7, 4], [2, 3], [10, 3, 2, 3], [4, 2, 4, 6]];
  const GPU_POINT = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot'];
  const VERDICTS = ['SLOWER', 'ERROR', 'DEVICE', 'UNSURE', 'FASTER', 'SAME', 'FIXED'];
  const VIEW_NAMES = {value: 'value', gbps: 'GB/s', pct: '% of peak'};
  const described = {kind: data.kind, charts: {}, lines: [], history: [], steps: [], rows: 0};
  window.opbench = described;

  // ------------------------------------------------------------------ small helpers

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const link = (href, text, cls) => el('a', {href: root + href, class: cls}, text);
  const text = (v) => (v === null || v === undefined || v === '' ? '-' : String(v));

  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-4 || a >= 1e7)) return v.toExponential(2);
    return Number(v.toPrecision(digits || 4)).toString();
  }
  const change = (ratio) => (ratio === null || ratio === undefined ? '-' : (ratio >= 1 ? '+' : '') +
                            ((ratio - 1) * 100).toFixed(1) + '%');
  const commit = (c) => (c ? c.slice(0, 8) : '');
  const day = (t) => (t ? t.slice(0, 10) : '');
  const fmtX = (x) => (x >= 1048576 && x % 1048576 === 0 ? x / 1048576 + 'M' :
                       x >= 1024 && x % 1024 === 0 ? x / 1024 + 'K' : String(x));
  const providerColor = (p) => PALETTE[Math.max(0, (data.providers || []).indexOf(p)) % PALETTE.length];

  function runText(r) {
    if (!r) return '-';
    return 'run ' + r.id + (r.label ? ' (' + r.label + ')' : '') + (r.commit ? ', ' + commit(r.commit) : '') +
           (r.started_at ? ', ' + day(r.started_at) : '');
  }

  function badge(verdict) { return el('span', {class: 'badge v-' + verdict}, verdict); }

  function topbar(crumbs) {
    const nav = el('nav', {class: 'crumbs'}, link('index.html', 'opbench', 'home'));
    for (const c of crumbs) nav.append(el('span', {class: 'sep'}, '›'), c);
    return el('header', {class: 'top'}, nav);
  }

  function section(title, ...content) {
    return el('section', {class: 'card'}, el('h2', {}, title), ...content);
  }

  function table(head, rows, cls) {
    return el('table', {class: cls || 'grid'}, el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
              el('tbody', {}, rows));
  }

  // The page's state in its address (#x=4096&view=gbps), so a link shows what its sender saw.
  function readHash() {
    const out = {};
    for (const part of location.hash.replace(/^#/, '').split('&'))
      if (part.includes('=')) out[decodeURIComponent(part.split('=')[0])] = decodeURIComponent(part.split('=')[1]);
    return out;
  }
  function writeHash(state) {
    const h = Object.entries(state).filter(([, v]) => v !== '' && v !== undefined && v !== null)
        .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&');
    history.replaceState(null, '', h ? '#' + h : location.pathname + location.search);
  }

  // ------------------------------------------------------------------ index

  function countCells(counts) {
    return VERDICTS.map((v) => {
      const n = (counts || {})[v] || 0;
      return el('td', {class: 'n' + (n && (v === 'SLOWER' || v === 'ERROR') ? ' bad' : n && v === 'FASTER' ? ' good' : '')},
                n ? String(n) : '·');
    });
  }

  function topList(top) {
    if (!top || !top.length) return null;
    return el('ul', {class: 'top-rows'}, top.map((t) => el('li', {},
        badge(t.verdict), ' ', t.page ? link(t.page + '#x=' + t.x, t.title) : t.title,
        el('span', {class: 'dim'}, ' ' + t.x_name + '=' + t.x + ' ' + t.provider + ' '), change(t.ratio))));
  }

  function verdictsSection(d) {
    if (!d.verdicts.length)
      return section('Latest verdicts', el('p', {class: 'dim'},
          'No op has two runs on one GPU yet: the verdicts compare the latest run with the one before it.'));
    const rows = d.verdicts.map((v) => el('tr', {},
        el('td', {}, v.op || '(other)'), el('td', {}, v.gpu),
        el('td', {}, runText(v.base), el('span', {class: 'dim'}, ' → '), runText(v.head)),
        v.error ? el('td', {colspan: VERDICTS.length + 1, class: 'dim'}, v.error) :
            [countCells(v.counts), el('td', {}, link(v.page, 'verdicts'), topList(v.top))]));
    return section('Latest verdicts',
        el('p', {class: 'dim'}, 'Per op and GPU, the latest run against the one before it (opbench diff, threshold ' +
           num(d.threshold_pct) + '%). SLOWER and ERROR are regressions.'),
        table(['op', 'GPU', 'base → head'].concat(VERDICTS, ['']), rows));
  }

  // Per op on several GPU models: its first GPU's latest run against each other GPU's, at equal peaks.
  function acrossSection(d) {
    if (!d.across || !d.across.length) return null;
    const rows = d.across.map((v) => el('tr', {},
        el('td', {}, v.op || '(other)'), el('td', {}, v.base_gpu, el('span', {class: 'dim'}, ' → '), v.gpu),
        el('td', {}, runText(v.base), el('span', {class: 'dim'}, ' → '), runText(v.head)),
        v.error ? el('td', {colspan: VERDICTS.length + 1, class: 'dim'}, v.error) :
            [countCells(v.counts), el('td', {}, link(v.page, 'verdicts'), topList(v.top))]));
    return section('Across GPU models',
        el('p', {class: 'dim'}, 'Per op, the latest run on its first GPU against the latest on each other, judged on ' +
           'each point\'s use of its run\'s measured peak bandwidth (opbench diff --normalize peak): SAME where a ' +
           'point uses both GPUs alike, SLOWER where it uses the second worse. Latency-bound points are judged on ' +
           'their time.'),
        table(['op', 'GPUs', 'base → head'].concat(VERDICTS, ['']), rows, 'grid across'));
  }

  function documentsSection(d) {
    if (!d.documents.length) return null;
    const rows = d.documents.map((doc) => el('tr', {},
        el('td', {}, doc.kind), el('td', {}, link(doc.page, doc.name)),
        el('td', {}, doc.kind === 'versus' ? [runText(doc.run), el('div', {class: 'dim'}, doc.versus)] :
            [runText(doc.base), el('span', {class: 'dim'}, ' → '), runText(doc.head)]),
        countCells(doc.counts), el('td', {}, topList(doc.top))));
    return section('Diffs and versus from CI', table(['kind', 'document', 'runs'].concat(VERDICTS, ['']), rows));
  }

  function tablesSection(d) {
    const filter = el('input', {type: 'search', placeholder: 'filter tables', class: 'filter'});
    const groups = d.ops.map((op) => {
      const rows = op.tables.map((t) => el('tr', {'data-title': t.title.toLowerCase()},
          el('td', {}, link(t.page, t.title)), el('td', {}, t.section), el('td', {}, t.metric || '-'),
          el('td', {}, t.gpus.map((g) => el('span', {class: 'chip'}, g))), el('td', {class: 'n'}, String(t.runs)),
          el('td', {class: 'n'}, t.regressed ? el('span', {class: 'badge v-SLOWER'}, t.regressed + ' stepped up') :
              t.steps ? String(t.steps) : '·')));
      return el('div', {class: 'op'}, el('h3', {}, op.op || '(tables of no known op)',
          el('span', {class: 'dim'}, ' ' + op.tables.length + ' tables')),
          table(['table', 'section', 'metric', 'GPUs', 'runs', 'steps'], rows));
    });
    filter.addEventListener('input', () => {
      const q = filter.value.toLowerCase();
      for (const tr of app.querySelectorAll('tr[data-title]')) tr.hidden = q && !tr.dataset.title.includes(q);
    });
    return section('Tables', el('p', {class: 'dim'}, 'Every op and its tables; steps: the level shifts found in ' +
        'the tables\' histories ("stepped up": a series whose latest level is a regression).'), filter, groups);
  }

  function runsSection(d) {
    const rows = d.runs.map((r) => el('tr', {},
        el('td', {class: 'n'}, link(r.report, String(r.id))), el('td', {}, r.label), el('td', {}, r.gpu),
        el('td', {class: 'mono'}, commit(r.commit) || (r.source === 'import' ? 'import' : '-')),
        el('td', {}, r.started_at ? r.started_at.slice(0, 16).replace('T', ' ') : '-'),
        el('td', {class: 'n'}, String(r.points)), el('td', {}, r.ops.join(', ')), el('td', {}, r.status)));
    return section('Runs', el('p', {class: 'dim'}, 'Newest first; an id opens the run\'s report (markdown).'),
                   table(['id', 'label', 'GPU', 'commit', 'started', 'points', 'ops', 'status'], rows));
  }

  function sourcesText(sources) {
    const names = sources.map((s) => s.split('/').pop());
    return names.length > 4 ? names.slice(0, 3).join(', ') + ' and ' + (names.length - 3) + ' more files' : names.join(', ');
  }

  function renderIndex(d) {
    const c = d.counts;
    const stat = (n, what) => el('div', {class: 'stat'}, el('b', {}, String(n)), what);
    app.append(topbar([el('span', {}, 'results')]),
        el('main', {},
            el('div', {class: 'stats'}, stat(c.runs, 'runs'), stat(c.gpus, 'GPUs'), stat(c.ops, 'ops'),
               stat(c.tables, 'tables'), stat(c.points, 'points')),
            el('p', {class: 'dim'}, 'GPUs: ' + d.gpus.join(', ') + '. Built ' + d.generated_at.slice(0, 16).replace('T', ' ') +
               ' UTC from ' + sourcesText(d.sources) + '.'),
            verdictsSection(d), acrossSection(d), documentsSection(d), tablesSection(d), runsSection(d)));
    described.rows = d.runs.length;
  }

  // ------------------------------------------------------------------ table page

  // A value as a view shows it, from a point's [value, GB/s, %] and its spread.
  const VIEW_INDEX = {value: 0, gbps: 1, pct: 2};
  function spreadOf(v, gbps, pct, p20, p80, view) {
    if (p20 === null || p80 === null || v === null) return null;
    if (view === 'value') return [p20, p80];
    const shown = view === 'gbps' ? gbps : pct;
    if (shown === null || !(p20 > 0) || !(p80 > 0)) return null;
    return [shown * v / p80, shown * v / p20];
  }

  function yLabel(d, view) {
    if (view === 'gbps') return 'GB/s of the minimal bytes';
    if (view === 'pct') return '% of the measured peak bandwidth';
    return (d.metric === 'memory' ? 'peak memory' : 'time') + ' (' + (d.unit || '?') + ', ' + d.stat + ')';
  }

  function unitOf(d, view) { return view === 'gbps' ? 'GB/s' : view === 'pct' ? '%' : d.unit; }

  function tooltipLines(d, view, p) {
    const u = unitOf(d, view);
    const lines = [p.name + ': ' + num(p.y) + ' ' + u];
    if (p.spread) lines.push('spread (p20-p80): ' + num(p.spread[0]) + ' - ' + num(p.spread[1]) + ' ' + u);
    if (p.samples !== undefined) lines.push('samples: ' + p.samples);
    if (p.level !== undefined && p.level !== null) lines.push('level: ' + num(p.level) + ' ' + u);
    if (p.step) lines.push('step: ' + p.step + (p.change !== null ? ' ' + change(1 + p.change) : ''));
    lines.push('commit: ' + (commit(p.run.commit) || '-') + ', ' + runText(p.run));
    return lines;
  }

  function chartOptions(d, view, logY, xTitle, tickLabel, onPick) {
    return {
      animation: false, parsing: false, responsive: true, maintainAspectRatio: false,
      interaction: {mode: 'nearest', intersect: false},
      scales: {
        x: {type: 'linear', title: {display: true, text: xTitle}, ticks: {stepSize: 1, callback: tickLabel}},
        y: {type: logY ? 'logarithmic' : 'linear', title: {display: true, text: yLabel(d, view)},
            ticks: {callback: (v) => num(v, 3)}},
      },
      plugins: {
        legend: {position: 'bottom', labels: {usePointStyle: true, boxWidth: 8,
                                              filter: (item, chart) => chart.datasets[item.datasetIndex].opbench.kind !== 'level'}},
        tooltip: {callbacks: {
          title: (items) => (items.length && items[0].raw.title) || '',
          label: (item) => (item.raw.run ? tooltipLines(d, view, item.raw) : item.dataset.label + ': ' + num(item.raw.y)),
        }},
      },
      onClick: (evt, elements, chart) => {
        if (!elements.length) return;
        const p = chart.data.datasets[elements[0].datasetIndex].data[elements[0].index];
        if (p && p.pick !== undefined) onPick(p.pick);
      },
    };
  }

  const lineName = (d, provider, label, gpu) => (label && label !== provider ? provider + ' (' + label + ')' : provider) +
      (d.gpus.length > 1 ? ' · ' + d.gpus[gpu].name : '');

  function latestDatasets(d, view) {
    const vi = VIEW_INDEX[view];
    const sets = d.latest.map((line) => {
      const g = d.gpus[line.gpu];
      const name = lineName(d, line.provider, line.label, line.gpu);
      const pts = line.points.filter((r) => r[1 + vi] !== null && (view !== 'value' || r[1] > 0)).map((r) => ({
        x: Math.log2(r[0]), y: r[1 + vi], pick: r[0], name, title: d.x_name + '=' + r[0],
        spread: spreadOf(r[1], r[2], r[3], r[4], r[5], view), samples: r[6], run: g.run})).sort((a, b) => a.x - b.x);
      return {label: name, data: pts, borderColor: providerColor(line.provider), backgroundColor: providerColor(line.provider),
              borderDash: GPU_DASH[line.gpu % GPU_DASH.length], pointStyle: GPU_POINT[line.gpu % GPU_POINT.length],
              pointRadius: 3.5, borderWidth: 2, opbench: {provider: line.provider, gpu: g.name, kind: 'line'}};
    });
    d.gpus.forEach((g, k) => {
      if (!g.floor || d.metric === 'memory') return;
      const pts = g.floor.filter((r) => r[1 + vi] !== null).map((r) => ({x: Math.log2(r[0]), y: r[1 + vi]}));
      sets.push({label: 'floor' + (d.gpus.length > 1 ? ' · ' + g.name : '') + ' (' + num(g.peak_gbps) + ' GB/s peak)',
                 data: pts, borderColor: '#555', backgroundColor: '#555', borderDash: [3, 3], pointRadius: 0,
                 borderWidth: 1.5, opbench: {gpu: g.name, kind: 'floor'}});
    });
    return sets;
  }

  const STEP_STYLE = {up: ['triangle', '#c62828', 0], down: ['triangle', '#2e7d32', 180],
                      error: ['crossRot', '#c62828', 0], fixed: ['rectRot', '#1565c0', 0]};

  function historyDatasets(d, view, x) {
    const vi = VIEW_INDEX[view];
    const sets = [];
    for (const s of d.series) {
      if (s.x !== x) continue;
      const name = lineName(d, s.provider, s.label, s.gpu);
      const color = providerColor(s.provider);
      const pts = [], levels = [];
      for (const e of s.entries) {
        const [col, v, gbps, pct, level, step, ch, p20, p80, n] = e;
        const shown = [v, gbps, pct][vi];
        if (shown === null || (view === 'value' && !(v > 0))) continue;
        const lv = level === null ? null : view === 'value' ? level : shown * v / level;
        const r = d.runs[col];
        pts.push({x: col, y: shown, name, title: d.x_name + '=' + x + ', ' + (commit(r[2]) || 'run ' + r[0]),
                  spread: spreadOf(v, gbps, pct, p20, p80, view), samples: n, level: lv, step, change: ch,
                  run: {id: r[0], label: r[1], commit: r[2], started_at: r[3]}});
        if (lv !== null) levels.push({x: col, y: lv});
      }
      const style = (ctx, i, dflt) => (ctx.raw && STEP_STYLE[ctx.raw.step] ? STEP_STYLE[ctx.raw.step][i] : dflt);
      sets.push({label: name, data: pts, borderColor: color, backgroundColor: color, borderWidth: 1.5,
                 borderDash: GPU_DASH[s.gpu % GPU_DASH.length],
                 pointStyle: (ctx) => style(ctx, 0, GPU_POINT[s.gpu % GPU_POINT.length]),
                 pointBackgroundColor: (ctx) => style(ctx, 1, color), pointBorderColor: (ctx) => style(ctx, 1, color),
                 pointRotation: (ctx) => style(ctx, 2, 0),
                 pointRadius: (ctx) => (ctx.raw && ctx.raw.step ? 8 : 2.5),
                 opbench: {provider: s.provider, gpu: d.gpus[s.gpu].name, kind: 'history',
                           steps: pts.filter((p) => p.step).map((p) => ({run: p.run.id, step: p.step}))}});
      sets.push({label: name + ' level', data: levels, borderColor: color, borderWidth: 1, borderDash: [1, 2],
                 pointRadius: 0, stepped: 'before', opbench: {provider: s.provider, gpu: d.gpus[s.gpu].name, kind: 'level'}});
    }
    return sets;
  }

  // Every change point of the table, the latest first.
  function allSteps(d) {
    const out = [];
    for (const s of d.series)
      for (const e of s.entries)
        if (e[5]) out.push({x: s.x, provider: s.provider, label: s.label, gpu: d.gpus[s.gpu].name, col: e[0], step: e[5],
                            change: e[6], regression: s.regression && e === lastStep(s)});
    out.sort((a, b) => b.col - a.col || a.x - b.x);
    return out;
  }
  function lastStep(s) {
    for (let i = s.entries.length - 1; i >= 0; --i) if (s.entries[i][5]) return s.entries[i];
    return null;
  }

  function defaultX(d, steps) {
    const reg = steps.find((s) => s.regression);
    if (reg) return reg.x;
    if (steps.length) return steps[0].x;
    const xs = d.series.map((s) => s.x);
    return xs.length ? Math.max(...xs) : null;
  }

  function stepsTable(d, steps, pick) {
    if (!steps.length)
      return el('p', {class: 'dim'}, 'No change points: every series holds one level (threshold ' + num(d.threshold_pct) + '%).');
    const rows = steps.map((s) => {
      const r = d.runs[s.col];
      return el('tr', {class: s.regression ? 'regressed' : '', onclick: () => pick(s.x)},
          el('td', {class: 'n'}, d.x_name + '=' + s.x), el('td', {}, s.label && s.label !== s.provider ?
              s.provider + ' (' + s.label + ')' : s.provider), el('td', {}, s.gpu),
          el('td', {}, 'run ' + r[0] + (r[1] ? ' (' + r[1] + ')' : '')), el('td', {class: 'mono'}, commit(r[2]) || '-'),
          el('td', {}, el('span', {class: 'step s-' + s.step}, s.step === 'up' ? '▲ up' : s.step === 'down' ? '▼ down' : s.step)),
          el('td', {class: 'n'}, s.change === null ? '-' : change(1 + s.change)),
          el('td', {}, s.regression ? 'the latest level: a regression' : ''));
    });
    return table([d.x_name, 'provider', 'GPU', 'run', 'commit', 'step', 'change', ''], rows, 'grid steps');
  }

  // The table page's parts: its head (GPUs, the view toggle), the two charts, the change points.
  function tableLayout(d, ui, steps, pick) {
    const gpuLines = d.gpus.map((g, k) => el('li', {}, el('b', {}, g.name), ' ', el('span', {class: 'dim'},
        'latest ' + runText(g.run) + (g.peak_gbps ? ', peak ' + num(g.peak_gbps) + ' GB/s' : '')),
        el('span', {class: 'gpu-key'}, ' line ' + ['solid', 'dashed', 'dotted', 'dash-dot', 'long dash'][k % 5])));
    return [topbar([el('span', {}, d.op || 'tables'), el('span', {}, d.title)]),
        el('main', {},
            el('div', {class: 'card head'}, el('h1', {}, d.title),
               el('p', {class: 'dim'}, [d.section && 'section ' + d.section, d.metric, 'x: ' + d.x_name + ' (log2)',
                 'value: ' + d.stat + ' ' + (d.unit || '')].filter(Boolean).join(' · ') + ' · ',
                 el('a', {href: d.markdown}, 'markdown table (reference format)')),
               el('ul', {class: 'gpus'}, gpuLines),
               el('div', {class: 'controls'}, el('span', {}, 'show '), ui.viewButtons,
                  el('label', {}, ui.logBox, ' log y'))),
            el('div', {class: 'panels'},
               el('section', {class: 'card'}, el('h2', {}, 'Latest run on each GPU'),
                  el('div', {class: 'chart'}, ui.latestCanvas),
                  el('p', {class: 'hint'}, 'Click a point to see its history.')),
               el('section', {class: 'card'}, ui.historyTitle, el('div', {class: 'controls'}, ui.xSelect),
                  el('div', {class: 'chart'}, ui.historyCanvas),
                  el('p', {class: 'hint'}, 'Runs in time order; ▲ a step up (slower), ▼ a step down, dotted: the fitted levels.'))),
            section('Change points', stepsTable(d, steps, pick)),
            sideBySide(d))];
  }

  // The latest run of each GPU side by side: per provider and x, each GPU's value and % of peak.
  function sideBySide(d) {
    if (d.gpus.length < 2) return null;
    const cells = new Map();  // provider -> x -> [row per GPU]
    for (const line of d.latest) {
      if (!cells.has(line.provider)) cells.set(line.provider, new Map());
      for (const p of line.points) {
        const byX = cells.get(line.provider);
        if (!byX.has(p[0])) byX.set(p[0], []);
        byX.get(p[0])[line.gpu] = p;
      }
    }
    const rows = [];
    for (const [provider, byX] of cells)
      for (const x of [...byX.keys()].sort((a, b) => a - b)) {
        const per = byX.get(x);
        const tds = d.gpus.map((g, k) => {
          const p = per[k];
          return [el('td', {class: 'n'}, p ? (p[7] ? 'error' : num(p[1])) : '-'),
                  el('td', {class: 'n'}, p && !p[7] ? num(p[3], 3) : '-')];
        });
        rows.push(el('tr', {}, el('td', {}, provider), el('td', {class: 'n'}, d.x_name + '=' + x), tds));
      }
    described.sideBySide = {gpus: d.gpus.length, rows: rows.length};
    const head = ['provider', 'x'].concat(...d.gpus.map((g) => [g.name + ' (' + (d.unit || d.stat) + ')', g.name + ' % of peak']));
    return section('GPUs side by side', el('p', {class: 'dim'}, 'The latest run on each GPU: ' + d.stat +
        ' and its share of that run\'s measured peak bandwidth (- where the run measured none).'),
        table(head, rows, 'grid side-by-side'));
  }

  function renderTable(d) {
    const state = readHash();
    const steps = allSteps(d);
    let view = d.views.includes(state.view) ? state.view : 'value';
    let x = state.x !== undefined && d.series.some((s) => String(s.x) === state.x) ? Number(state.x) : defaultX(d, steps);
    let logY = state.log !== undefined ? state.log === '1' : d.metric !== 'memory';
    const xs = [...new Set(d.series.map((s) => s.x))].sort((a, b) => a - b);

    const latestCanvas = el('canvas', {id: 'latest-chart'});
    const historyCanvas = el('canvas', {id: 'history-chart'});
    const xSelect = el('select', {}, xs.map((v) => el('option', {value: v}, d.x_name + '=' + v)));
    const viewButtons = el('div', {class: 'seg'}, ['value', 'gbps', 'pct'].map((v) =>
        el('button', {'data-view': v, disabled: !d.views.includes(v)}, VIEW_NAMES[v])));
    const logBox = el('input', {type: 'checkbox'});
    const historyTitle = el('h2', {});
    const pick = (nx) => { x = nx; draw(); };

    app.append(...tableLayout(d, {latestCanvas, historyCanvas, xSelect, viewButtons, logBox, historyTitle}, steps, pick));

    viewButtons.addEventListener('click', (ev) => {
      const v = ev.target.dataset && ev.target.dataset.view;
      if (v && d.views.includes(v)) { view = v; logY = v === 'value' && d.metric !== 'memory'; draw(); }
    });
    logBox.addEventListener('change', () => { logY = logBox.checked; draw(); });
    xSelect.addEventListener('change', () => pick(Number(xSelect.value)));

    const xTick = (v) => (Number.isInteger(v) ? fmtX(Math.pow(2, v)) : '');
    const runTick = (v) => (Number.isInteger(v) && d.runs[v] ? (commit(d.runs[v][2]) || 'run ' + d.runs[v][0]) : '');
    let latest = null, hist = null;
    function draw() {
      for (const b of viewButtons.children) b.classList.toggle('on', b.dataset.view === view);
      logBox.checked = logY;
      xSelect.value = String(x);
      historyTitle.textContent = 'History of ' + d.x_name + '=' + x + ' across runs';
      if (latest) latest.destroy();
      if (hist) hist.destroy();
      latest = new Chart(latestCanvas, {type: 'line', data: {datasets: latestDatasets(d, view)},
                                        options: chartOptions(d, view, logY, d.x_name + ' (log2)', xTick, pick)});
      hist = new Chart(historyCanvas, {type: 'line', data: {datasets: historyDatasets(d, view, x)},
                                       options: chartOptions(d, view, logY, 'run (commit)', runTick, () => {})});
      described.charts = {latest, history: hist};
      described.lines = latest.data.datasets.map((s) => Object.assign({points: s.data.length}, s.opbench));
      described.history = hist.data.datasets.map((s) => Object.assign({points: s.data.length}, s.opbench));
      described.x = x;
      described.view = view;
      writeHash({x, view: view === 'value' ? '' : view, log: logY === (view === 'value' && d.metric !== 'memory') ? '' : (logY ? 1 : 0)});
    }
    described.steps = steps;
    described.pick = pick;
    draw();
  }

  // ------------------------------------------------------------------ diff / versus page

  function summaryTable(d, vs) {
    const rows = d.summary.map((s) => el('tr', {},
        el('td', {}, s.provider), el('td', {class: 'n'}, String(s.points)),
        el('td', {class: 'n'}, num(s.geomean_ratio)), countCells(s.counts),
        el('td', {class: 'n'}, s.worst_ratio === null ? '-' : change(s.worst_ratio))));
    return table([vs ? 'against → provider' : 'provider', 'points', vs ? 'geomean provider/against' : 'geomean head/base']
        .concat(VERDICTS, ['worst']), rows);
  }

  const SEVERITY = {SLOWER: 0, ERROR: 1, DEVICE: 3, UNSURE: 3, FASTER: 4, SAME: 5, FIXED: 6};
  function sortRows(points) {
    return points.slice().sort((a, b) => {
      const sa = SEVERITY[a.verdict] === 1 && !a.regression ? 2 : SEVERITY[a.verdict];
      const sb = SEVERITY[b.verdict] === 1 && !b.regression ? 2 : SEVERITY[b.verdict];
      if (sa !== sb) return sa - sb;
      const ra = a.ratio || 0, rb = b.ratio || 0;
      return sa === 4 ? ra - rb : sa <= 3 ? rb - ra : 0;
    });
  }

  // A row per compared point, the worst first; each row keeps its point (tr.row) for the filters.
  function diffRows(d, peaks) {
    return sortRows(d.points).map((p) => {
      const page = d.links && d.links[p.title];
      const who = p.base_provider && p.base_provider !== p.provider ? p.base_provider + ' → ' + p.provider : p.provider;
      const tr = el('tr', {class: 'v-row-' + p.verdict},
          el('td', {}, page ? link(page + '#x=' + p.x, p.title) : p.title), el('td', {class: 'n'}, p.x_name + '=' + p.x),
          el('td', {}, who), el('td', {class: 'n'}, p.base_error ? 'error' : num(p.base)),
          el('td', {class: 'n'}, p.head_error ? 'error' : num(p.head)),
          el('td', {class: 'n'}, p.ratio === null ? '-' : p.ratio.toFixed(3)), el('td', {class: 'n'}, change(p.ratio)),
          el('td', {}, badge(p.verdict)), el('td', {class: 'n'}, num(p.p_value, 2)), el('td', {class: 'n'}, num(p.rounds_p, 2)),
          peaks ? el('td', {class: 'n'}, num(p.pct_peak_base, 3) + ' → ' + num(p.pct_peak_head, 3)) : null,
          d.normalize ? el('td', {}, p.apart ? 'time' : p.metric === 'speed' ? 'peak' : '-') : null);
      tr.row = p;
      return tr;
    });
  }

  // The diff page's head: its runs, metric and threshold, the verdict in one line, the warnings.
  function diffHead(d, vs) {
    const flagged = vs ? d.slower : d.regressions;
    return el('div', {class: 'card head'},
               el('h1', {}, vs ? 'versus: ' + d.versus : 'diff: ' + runText(d.base) + ' → ' + runText(d.head)),
               el('p', {class: 'dim'}, (vs ? runText(d.run) + ' · ' : (d.base.gpu ? (d.base.gpu === d.head.gpu ? d.base.gpu : d.base.gpu + ' → ' + d.head.gpu) + ' · ' : '')) +
                  'metric ' + d.metric + ' · threshold ' + num(d.threshold_pct) + '%' +
                  (d.origin === 'latest' ? ' · the latest run on this GPU against the one before it' :
                   d.origin === 'gpus' ? ' · the latest run on each GPU' :
                   d.source ? ' · from ' + d.source : '')),
               el('p', {class: flagged ? 'verdict bad' : 'verdict good'}, flagged ?
                  flagged + (vs ? ' slower point' : ' regression') + (flagged === 1 ? '' : 's') :
                  (vs ? 'No slower points.' : 'No regressions.')),
               d.normalize ? el('p', {class: 'dim normalized'}, 'Normalized to the peak: base ' +
                  num(d.normalize.peak_gbps_base) + ' GB/s, head ' + num(d.normalize.peak_gbps_head) + ' GB/s (×' +
                  num(d.normalize.peak_ratio, 3) + '). A point from ' + num(d.normalize.bandwidth_bound_pct) +
                  '% of its run\'s peak is judged on its use of the peak (head/base: the base\'s fraction of peak ' +
                  'over the head\'s); the others, latency-bound, on their time.') : null,
               (d.warnings || []).map((w) => el('p', {class: 'warning'}, 'Warning: ' + w + '.')));
  }

  // --normalize peak: per provider, the points whose use of the head's peak fell most.
  function scalingSection(d) {
    if (!d.normalize || !d.normalize.scaling_worst.length) return null;
    const rows = [];
    for (const s of d.normalize.scaling_worst)
      for (const p of s.points)
        rows.push(el('tr', {}, el('td', {}, s.provider),
            el('td', {}, d.links && d.links[p.title] ? link(d.links[p.title] + '#x=' + p.x, p.title) : p.title),
            el('td', {class: 'n'}, String(p.x)), el('td', {class: 'n'}, num(p.pct_peak_base, 3) + ' → ' + num(p.pct_peak_head, 3)),
            el('td', {class: 'n'}, p.ratio === null ? '-' : p.ratio.toFixed(3)), el('td', {}, badge(p.verdict))));
    described.scaling = rows.length;
    return section('Scaling worst', el('p', {class: 'dim'}, 'Per provider, the points judged on the peak whose use ' +
        'of the head\'s peak fell most.'), table(['provider', 'title', 'x', '% of peak', 'head/base at equal peaks', 'verdict'], rows));
  }

  function renderDiff(d) {
    const vs = d.origin === 'versus';
    const state = readHash();
    const providers = [...new Set(d.points.map((p) => p.provider))].sort();
    const verdictSel = el('select', {}, [['', 'every verdict'], ['SLOWER', 'SLOWER only'], ['changed', 'changes (not SAME)']]
        .concat(VERDICTS.filter((v) => v !== 'SLOWER').map((v) => [v, v + ' only'])).map(([v, t]) => el('option', {value: v}, t)));
    const providerSel = el('select', {}, [el('option', {value: ''}, 'every provider')].concat(providers.map((p) => el('option', {value: p}, p))));
    const titleBox = el('input', {type: 'search', placeholder: 'title contains', class: 'filter'});
    verdictSel.value = state.verdict || '';
    providerSel.value = providers.includes(state.provider) ? state.provider : '';
    titleBox.value = state.title || '';
    const count = el('span', {class: 'dim'});
    const body = el('tbody', {});
    const peaks = d.points.some((p) => p.pct_peak_base !== undefined);
    const head = (vs ? ['title', 'x', 'against → provider', 'against', 'provider', 'provider/against']
                     : ['title', 'x', 'provider', 'base', 'head', 'head/base']).concat(['change', 'verdict', 'p', 'rounds p'],
                     peaks ? ['% of peak'] : [], d.normalize ? ['judged on'] : []);
    const rows = diffRows(d, peaks);
    body.append(...rows);
    function apply() {
      const v = verdictSel.value, pr = providerSel.value, t = titleBox.value.toLowerCase();
      let shown = 0;
      for (const tr of rows) {
        const p = tr.row;
        const ok = (!v || (v === 'changed' ? p.verdict !== 'SAME' : p.verdict === v)) && (!pr || p.provider === pr) &&
                   (!t || p.title.toLowerCase().includes(t));
        tr.hidden = !ok;
        shown += ok ? 1 : 0;
      }
      count.textContent = shown + ' of ' + rows.length + ' points';
      described.rows = shown;
      writeHash({verdict: v, provider: pr, title: titleBox.value});
    }
    for (const c of [verdictSel, providerSel]) c.addEventListener('change', apply);
    titleBox.addEventListener('input', apply);

    const what = vs ? 'versus' : 'diff';
    app.append(topbar([el('span', {}, what), el('span', {}, d.op || (d.source ? d.source.split('/').pop() : ''))]),
        el('main', {},
            diffHead(d, vs),
            section('Summary', summaryTable(d, vs)),
            scalingSection(d),
            section('Verdicts', el('div', {class: 'controls'}, verdictSel, providerSel, titleBox, count),
                    el('table', {class: 'grid'}, el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))), body))));
    apply();
  }

  // ------------------------------------------------------------------ start

  try {
    if (data.kind === 'index') renderIndex(data);
    else if (data.kind === 'table') renderTable(data);
    else if (data.kind === 'diff') renderDiff(data);
    else throw new Error('opbench site: unknown page kind ' + data.kind);
  } finally {
    described.ready = true;
    described.renderMs = performance.now();
    document.body.dataset.ready = '1';
  }
})();
