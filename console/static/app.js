// The savepoint console: plain JavaScript, no build step. Reads /api/…, refreshes the runs list on
// the server's version events and a run's view on that run's event stream, and steers (approve, reject, kill, resume, fork, global kill) after a confirmation.

// The session token comes in the printed address's fragment (`/#token=…`: no browser sends a
// fragment to a server). It is kept in this tab's sessionStorage (this origin's, so this port's
// only), sent as a header, and taken out of the address bar. Never a cookie: a browser would send
// it to every port of 127.0.0.1.
let token = sessionStorage.getItem('savepoint-token') ?? '';
function adoptToken() {
  const offered = new URLSearchParams(location.hash.slice(1)).get('token');
  if (offered === null) return false;
  token = offered;
  sessionStorage.setItem('savepoint-token', token);
  history.replaceState(null, '', '/#/');
  return true;
}
adoptToken();
const main = document.getElementById('main');
let info = { readOnly: true, canStart: false };

/** What the page says when its server is gone (the browser's own words were "Failed to fetch"). */
const GONE = 'the console\'s server has stopped: the `savepoint run` that served it ended (its run finished, was stopped or killed). `savepoint console` serves the state directory.';

async function api(path, options = {}) {
  let response;
  try {
    response = await fetch(`/api/${path}`, {
      ...options,
      headers: { 'x-savepoint-token': token, ...(options.body ? { 'content-type': 'application/json' } : {}) },
    });
  } catch {
    throw Object.assign(new Error(GONE), { gone: true });
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(body.message ?? `HTTP ${response.status}`), { status: response.status });
  return body;
}

/** Builds an element: h('td', { class: 'num' }, 'text', child…). Text is text, never HTML. */
function h(tag, attrs = {}, ...children) {
  const svg = ['svg', 'rect', 'text', 'path', 'g', 'title', 'marker', 'defs'].includes(tag);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) if (child !== undefined && child !== null && child !== false) el.append(child instanceof Node ? child : String(child));
  return el;
}

const dollars = (d) => `$${d.toFixed(d < 1 ? 4 : 2)}`;
const duration = (s) => (s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${Math.floor(s / 60)} m ${Math.round(s % 60)} s` : `${(s / 3600).toFixed(1)} h`);
const json = (value) => h('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '');

function notice(text, error = false) {
  const el = document.getElementById('notice');
  el.textContent = text;
  el.className = error ? 'error' : '';
  el.hidden = false;
}

/** Asks before steering; resolves to the reason typed, or undefined when cancelled. */
function confirmAction(text, { reason = true } = {}) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-reason-label').hidden = !reason;
  document.getElementById('confirm-reason').value = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok' ? document.getElementById('confirm-reason').value : undefined), { once: true });
    dialog.showModal();
  });
}

async function steer(question, path, body, done, options) {
  const reason = await confirmAction(question, options);
  if (reason === undefined) return;
  try {
    const result = await api(path, { method: 'POST', body: JSON.stringify({ ...body, ...(options?.reason === false || !reason ? {} : { reason }) }) });
    notice(done(result));
  } catch (error) {
    notice(error.gone ? error.message : `Refused: ${error.message}`, true);
  }
  render();
}

// ---- runs ---------------------------------------------------------------------------------------

const filters = { agent: '', status: '', day: '' };

async function renderRuns() {
  const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  const { runs, damaged = [], more = false } = await api(`runs?${query}`);
  const field = (name, control) => h('label', {}, name, control);
  const input = (key, attrs) => h('input', { ...attrs, value: filters[key], 'data-testid': `filter-${key}`, onchange: (e) => { filters[key] = e.target.value; render(); } });
  const statuses = ['', 'running', 'input_required', 'succeeded', 'failed', 'stopped', 'killed'];
  const agents = [...new Set(runs.map((run) => run.agent).concat(filters.agent ? [filters.agent] : []))];
  return [
    h('h1', {}, 'Runs'),
    h('div', { class: 'filters' },
      field('Agent', h('select', { 'data-testid': 'filter-agent', onchange: (e) => { filters.agent = e.target.value; render(); } },
        h('option', { value: '' }, 'all'), agents.map((a) => h('option', { value: a, selected: a === filters.agent }, a)))),
      field('Status', h('select', { 'data-testid': 'filter-status', onchange: (e) => { filters.status = e.target.value; render(); } },
        statuses.map((s) => h('option', { value: s, selected: s === filters.status }, s || 'all')))),
      field('Day', input('day', { type: 'date' }))),
    // Runs whose ledger records fail verification: named, never listed as if they could be trusted.
    damaged.length === 0 ? '' : h('div', { class: 'damaged', 'data-testid': 'damaged-runs' },
      h('p', {}, `${damaged.length} run${damaged.length > 1 ? 's' : ''} left out: ${damaged.length > 1 ? 'their records fail' : 'its record fails'} verification. Run savepoint verify on ${damaged.length > 1 ? 'each' : 'it'}.`),
      h('ul', {}, damaged.map((run) => h('li', { 'data-run': run.runId }, h('code', {}, run.runId), ': ', run.error)))),
    more ? h('p', { class: 'muted', 'data-testid': 'more-runs' }, `The newest ${runs.length} runs that match; older ones too: filter by agent, status or day to find them.`) : '',
    runs.length === 0
      ? h('p', { class: 'muted' }, damaged.length ? 'No other run.' : 'No run yet.')
      : h('table', { 'data-testid': 'runs' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Run'), h('th', {}, 'Agent'), h('th', {}, 'Status'), h('th', { class: 'num' }, 'Steps'),
            h('th', { class: 'num' }, 'Dollars'), h('th', { class: 'num' }, 'Duration'), h('th', { class: 'num' }, 'Executions'), h('th', {}, 'Started'), h('th', {}, 'Waiting for'))),
          h('tbody', {}, runs.map((run) => h('tr', { 'data-run': run.runId },
            h('td', {}, h('a', { href: `#/run/${encodeURIComponent(run.runId)}` }, run.runId)),
            h('td', {}, run.agent),
            h('td', {}, h('span', { class: `badge ${run.lifecycle}`, 'data-testid': 'run-status' }, run.lifecycle === run.status ? run.status : `${run.status} · ${run.lifecycle}`)),
            h('td', { class: 'num' }, run.steps),
            h('td', { class: 'num' }, dollars(run.dollars)),
            h('td', { class: 'num' }, duration(run.durationSeconds)),
            // The run's status is the ledger's: a run that handed off to a successor execution is still running.
            h('td', { class: 'num', 'data-testid': 'run-executions', title: `${run.status === 'running' ? 'driven by' : 'last'} ${run.execution}` }, run.executions),
            h('td', {}, new Date(run.createdAt).toLocaleString()),
            h('td', {}, run.pendingApprovals ? `${run.pendingApprovals} approval${run.pendingApprovals > 1 ? 's' : ''}` : ''))))),
  ];
}

// ---- one run ------------------------------------------------------------------------------------

let runPage = { runId: '', page: 0 };

function figure(label, used, limit, format = (x) => x) {
  const share = limit ? Math.min(1, used / limit) : 0;
  const bar = h('div', { class: `bar${share > 0.8 ? ' hot' : ''}` }, h('div'));
  bar.firstChild.style.width = `${(share * 100).toFixed(1)}%`;
  return h('div', { class: 'figure' }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, format(used), limit ? h('span', { class: 'muted' }, ` / ${format(limit)}`) : ''), limit ? bar : '');
}

const VIA = { start: 'started', handoff: 'handoff', recovery: 'recovery', resume: 'resume' };
const ROLE_BADGE = { driving: 'running', 'handed off': 'completed', superseded: 'stopped' };
// The graph counts over the whole chain, or over the execution picked here (per run).
let graphExecution = { runId: '', name: '' };

function machineControls(runId, machine) {
  if (machine.executions.length <= 1) return '';
  const pick = (e) => { graphExecution = { runId, name: e.target.value }; render(); };
  return h('p', { class: 'muted' }, 'Counts of ',
    h('select', { 'data-testid': 'graph-execution', onchange: pick },
      h('option', { value: '', selected: !machine.selected }, `all ${machine.executions.length} executions`),
      machine.executions.map((name) => h('option', { value: name, selected: name === machine.selected }, name))));
}

async function renderRun(runId, page) {
  const picked = graphExecution.runId === runId && graphExecution.name ? `?execution=${encodeURIComponent(graphExecution.name)}` : '';
  const [view, machine] = await Promise.all([api(`runs/${encodeURIComponent(runId)}`), api(`runs/${encodeURIComponent(runId)}/state-machine${picked}`).catch(() => undefined)]);
  const last = Math.max(1, Math.ceil((view.report.steps || 1) / 200));
  const wanted = page || (runPage.runId === runId && runPage.page) || last;
  const line = await api(`runs/${encodeURIComponent(runId)}/timeline?page=${wanted}`);
  runPage = { runId, page: line.page };
  const { report } = view;
  const g = report.guards;
  const steerable = !info.readOnly;
  return [
    h('p', {}, h('a', { href: '#/' }, '← Runs')),
    h('h1', {}, runId, ' ', h('span', { class: `badge ${view.lifecycle}`, 'data-testid': 'run-lifecycle' }, view.lifecycle), ' ',
      h('span', { class: `badge ${report.status}`, 'data-testid': 'run-status' }, report.status)),
    lineage(view.lineage),
    h('div', { class: 'card' },
      h('div', { class: 'figures' },
        figure('Steps', g.steps.used, g.steps.limit),
        figure('Tokens', g.tokens.used, g.tokens.limit),
        figure('Dollars', g.dollars.used, g.dollars.limit, dollars),
        figure('Wall clock', g.wallSeconds.used, g.wallSeconds.limit, duration)),
      h('p', { class: 'muted' }, `agent ${report.agent} · ${report.modelTurns} model turns · ${report.toolCalls} tool calls · ${report.executions} execution(s)`,
        report.stopReason ? ` · stop: ${report.stopReason}` : '', report.error ? ` · ${report.error.error}` : '',
        report.killed ? ` · killed by ${report.killed.by}${report.killed.reason ? `: ${report.killed.reason}` : ''}` : ''),
      report.summary ? h('p', { 'data-testid': 'run-summary' }, Object.entries(report.summary).map(([k, v]) => `${k} ${v}`).join(' · ')) : '',
      // The child runs its agent tools started (defineAgentTool), each a link to its own run.
      report.children?.length ? childRunList(report.children, { class: 'muted', 'data-testid': 'child-runs' }) : '',
      steerable ? h('div', { class: 'actions' },
        report.status === 'running' ? h('button', { class: 'danger', 'data-testid': 'kill-run', onclick: () => steer(`Kill run ${runId}? It stops before its next step; a pending approval is rejected.`, `runs/${encodeURIComponent(runId)}/kill`, {}, (r) => `Run ${runId}: killed — it stops before its next step (now ${r.status})`) }, 'Kill run') : '',
        report.status === 'failed' && info.canStart ? h('button', { class: 'primary', 'data-testid': 'resume-run', onclick: () => steer(`Resume run ${runId} where it stopped?`, `runs/${encodeURIComponent(runId)}/resume`, {}, (r) => `Run ${runId} resumed: ${r.executionArn}`, { reason: false }) }, 'Resume run') : '') : ''),
    view.approvals.length ? h('h2', {}, 'Waiting for a decision') : '',
    view.approvals.map((approval) => h('div', { class: 'card approval', 'data-testid': 'approval', 'data-approval': approval.approvalId },
      h('strong', {}, approval.summary), h('div', { class: 'muted' }, `${approval.toolName} · decide by ${new Date(approval.decideBy).toLocaleString()} · ${approval.approvalId}`),
      approval.details ? h('dl', { class: 'kv' }, Object.entries(approval.details).map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])) : '',
      steerable ? h('div', { class: 'actions' },
        h('button', { class: 'ok', 'data-testid': 'approve', onclick: () => steer(`Approve: ${approval.summary}?`, `approvals/${encodeURIComponent(approval.approvalId)}/decide`, { decision: 'approve' }, (r) => `Approval ${approval.approvalId}: ${r.waitingForSecond ? 'your approval is recorded; a second approver must approve too' : `${r.status}${r.delivered ? ' — the run continues' : ''}`}`) }, 'Approve'),
        h('button', { class: 'danger', 'data-testid': 'reject', onclick: () => steer(`Reject: ${approval.summary}?`, `approvals/${encodeURIComponent(approval.approvalId)}/decide`, { decision: 'reject' }, (r) => `Approval ${approval.approvalId}: ${r.status}`) }, 'Reject')) : '')),
    h('h2', {}, `Executions (${view.executions.length})`),
    h('ol', { class: 'card chain', 'data-testid': 'executions' }, view.executions.map((e) => h('li', { 'data-execution': e.name, 'data-via': e.via, 'data-role': e.role },
      e.link ? h('a', { href: e.link, target: '_blank', rel: 'noopener noreferrer' }, h('code', {}, e.name)) : h('code', {}, e.name), ' ',
      h('span', { class: `badge via-${e.via}` }, VIA[e.via] ?? e.via), ' ',
      h('span', { class: `badge ${ROLE_BADGE[e.role] ?? e.role}`, 'data-testid': 'execution-role' }, e.role), ' ',
      h('span', { class: 'muted' }, e.reason, e.status ? ` · execution ${e.status}` : '', e.startedAt ? ` · ${time(e.startedAt)}` : '')))),
    machine ? [h('h2', {}, 'State machine'), machineControls(runId, machine), graph(machine)] : '',
    h('h2', {}, `Timeline (${line.totalSteps} steps)`),
    pager(line),
    h('ol', { class: 'timeline', 'data-testid': 'timeline' }, line.items.map((item) => timelineItem(item, line.budgets, steerable && info.canStart && report.status !== 'running' ? runId : undefined))),
    pager(line),
  ];
}

const runLink = (runId) => h('a', { href: `#/run/${encodeURIComponent(runId)}` }, runId);
/** A run's child runs as a nested list, each a link to its own run with its status, its own children below it. */
function childRunList(children, attrs = {}) {
  return h('ul', attrs, children.map((child) => h('li', { 'data-child': child.runId, 'data-status': child.status }, 'child run ', runLink(child.runId), ` · ${child.agent} by ${child.tool} (${child.turn}/${child.call}) · ${child.status}`,
    child.children?.length ? childRunList(child.children) : '')));
}

/** The run's parent (when it is a fork) and its forks, each a link to its page. */
function lineage(l) {
  if (!l || (!l.forkedFrom && l.forks.length === 0)) return '';
  return h('div', { class: 'card lineage', 'data-testid': 'lineage' },
    l.forkedFrom ? h('p', { 'data-testid': 'forked-from' }, 'Forked from ', runLink(l.forkedFrom.runId), ` at turn ${l.forkedFrom.turn} (effects ${l.forkedFrom.effects}${l.forkedFrom.edited ? `; edited: ${Object.keys(l.forkedFrom.edited).join(', ')}` : ''})`) : '',
    l.forks.length ? h('p', { 'data-testid': 'forks' }, 'Forks: ', l.forks.map((fork, index) => [index ? ', ' : '', runLink(fork.runId), ` at turn ${fork.turn}`])) : '');
}

/**
 * "Fork from here": the hazard report of a fork at this turn, shown before anything starts; the
 * fork starts only once confirmed, and the page goes to it.
 */
async function forkFrom(runId, turn, effects) {
  let report;
  try {
    report = await api(`runs/${encodeURIComponent(runId)}/fork-report?at=${turn}&effects=${effects}`);
  } catch (error) {
    return notice(`Refused: ${error.message}`, true);
  }
  if ((await confirmAction(report.lines.join('\n'), { reason: false })) === undefined) return;
  try {
    const started = await api(`runs/${encodeURIComponent(runId)}/fork`, { method: 'POST', body: JSON.stringify({ at: turn, effects }) });
    notice(`Fork ${started.runId} started from turn ${turn} of ${runId}`);
    location.hash = `#/run/${encodeURIComponent(started.runId)}`;
  } catch (error) {
    notice(error.gone ? error.message : `Refused: ${error.message}`, true);
  }
}

function pager(line) {
  if (line.pages <= 1) return '';
  const go = (page) => () => { runPage.page = page; render(); };
  return h('div', { class: 'pager', 'data-testid': 'pager' },
    h('button', { disabled: line.page <= 1, onclick: go(1) }, '« first'),
    h('button', { disabled: line.page <= 1, onclick: go(line.page - 1) }, '‹ previous'),
    h('span', {}, `page ${line.page} of ${line.pages} (steps ${(line.page - 1) * line.pageSize + 1}–${Math.min(line.totalSteps, line.page * line.pageSize)})`),
    h('button', { disabled: line.page >= line.pages, onclick: go(line.page + 1) }, 'next ›'),
    h('button', { disabled: line.page >= line.pages, onclick: go(line.pages) }, 'last »'));
}

function cumulative(c, budgets) {
  return `Σ ${c.steps}/${budgets.steps} steps · ${c.tokens.toLocaleString()}/${budgets.tokens.toLocaleString()} tokens · ${dollars(c.dollars)}/${dollars(budgets.dollars)}`;
}

const EXECUTION_KIND = { start: 'execution ', handoff: 'handed off to execution ', recovery: 'recovered by execution ', resume: 'resumed by execution ' };

/** `forkable`: the run id when a fork may start from its turns (steerable, an engine, the run not running). */
function timelineItem(item, budgets, forkable) {
  switch (item.kind) {
    case 'turn':
      return h('li', { class: 'item turn', 'data-step': item.step, 'data-turn': item.turn },
        h('div', { class: 'head' }, h('span', { class: 'step' }, `#${item.step}`), h('span', { class: 'kind' }, `model turn ${item.turn}`),
          h('span', { class: 'muted' }, `${item.model} · ${item.stopReason}`),
          h('span', { class: 'meta' }, `${item.tokens.input}+${item.tokens.output} tokens · ${dollars(item.dollars)} · ${item.latencyMs} ms · ${cumulative(item.cumulative, budgets)}`),
          forkable ? h('span', { class: 'actions' },
            h('button', { 'data-testid': 'fork-here', title: 'a new run: the turns before this one copied, this one and the rest live; a write the parent made is answered from its record', onclick: () => forkFrom(forkable, item.turn, 'reuse') }, 'Fork from here'),
            h('button', { 'data-testid': 'dry-fork-here', title: 'the same, sending no write', onclick: () => forkFrom(forkable, item.turn, 'dry') }, 'Dry fork')) : ''),
        item.text.map((text) => h('div', { class: 'text' }, text)),
        item.toolUses.map((use) => h('div', {}, h('span', { class: 'muted' }, '→ calls '), h('code', {}, use.name), json(use.input))));
    case 'call':
      return h('li', { class: `item call ${item.effect}`, 'data-step': item.step },
        h('div', { class: 'head' }, h('span', { class: 'step' }, `#${item.step}`), h('span', { class: 'kind' }, `tool ${item.effect}`), h('code', {}, item.name),
          h('span', { class: `badge ${item.outcome === 'ok' ? 'succeeded' : item.outcome ? 'failed' : 'running'}` }, item.outcome ?? item.status),
          h('span', { class: 'meta' }, `${item.attempts} attempt${item.attempts === 1 ? '' : 's'}${item.latencyMs !== undefined ? ` · ${item.latencyMs} ms` : ''} · ${cumulative(item.cumulative, budgets)}`)),
        h('dl', { class: 'kv' },
          item.effect === 'write' ? [h('dt', {}, 'idempotency key'), h('dd', {}, h('code', { 'data-testid': 'idempotency-key' }, item.idempotencyKey))] : '',
          item.approval ? [h('dt', {}, 'approval'), h('dd', {}, `${item.approval.status}${item.approval.decidedBy ? ` by ${item.approval.decidedBy}` : ''}${item.approval.reason ? ` — ${item.approval.reason}` : ''}`)] : ''),
        h('div', { class: 'muted' }, 'arguments'), json(item.args),
        item.result !== undefined ? [h('div', { class: 'muted' }, item.effect === 'write' ? "provider's answer" : 'result'), json(item.result)] : '');
    case 'retry':
      return h('li', { class: 'item retry' }, h('span', { class: 'kind' }, 'retry '), `${item.state} failed with `, h('code', {}, item.error), h('span', { class: 'muted' }, ` · ${time(item.at)} · ${item.execution}`));
    case 'guard':
      return h('li', { class: 'item guard' }, h('span', { class: 'kind' }, `guard ${item.action} `), `${item.guard}: ${item.reason}`, h('span', { class: 'muted' }, ` · ${time(item.at)}`));
    case 'execution':
      return h('li', { class: 'item execution', 'data-via': item.via }, h('span', { class: 'kind' }, EXECUTION_KIND[item.via] ?? 'execution '),
        item.link ? h('a', { href: item.link, target: '_blank', rel: 'noopener noreferrer' }, h('code', {}, item.execution)) : h('code', {}, item.execution),
        item.status ? ` — ${item.status}` : '', h('span', { class: 'muted' }, ` · ${item.reason}`, item.at ? ` · ${time(item.at)}` : ''));
    case 'recovery':
      return h('li', { class: 'item recovery' }, h('span', { class: 'kind' }, `recovery ${item.attempts} `), item.reason, ' → ', h('code', {}, item.execution));
    case 'budget-approval':
      return h('li', { class: 'item budget-approval' }, h('span', { class: 'kind' }, 'budget extension '), `${item.summary}: ${item.status}`);
    case 'kill':
      return h('li', { class: 'item kill' }, h('span', { class: 'kind' }, 'killed '), `by ${item.by}${item.reason ? `: ${item.reason}` : ''}`, h('span', { class: 'muted' }, ` · ${time(item.at)}`));
    default:
      return h('li', { class: 'item' }, JSON.stringify(item));
  }
}

function graph(machine) {
  const W = 190, H = 46;
  const at = Object.fromEntries(machine.nodes.map((n) => [n.name, n]));
  const svg = h('svg', { width: machine.width, height: machine.height, viewBox: `0 0 ${machine.width} ${machine.height}`, 'data-testid': 'state-machine' },
    h('defs', {}, h('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, h('path', { d: 'M 0 0 L 10 5 L 0 10 z' }))));
  for (const edge of machine.edges) {
    const a = at[edge.from], b = at[edge.to];
    if (!a || !b) continue;
    let d;
    if (b.y > a.y) d = `M ${a.x + W / 2} ${a.y + H} C ${a.x + W / 2} ${a.y + H + 20}, ${b.x + W / 2} ${b.y - 20}, ${b.x + W / 2} ${b.y}`;
    else { const x = Math.max(a.x, b.x) + W; d = `M ${a.x + W} ${a.y + H / 2} C ${x + 60} ${a.y + H / 2}, ${x + 60} ${b.y + H / 2}, ${b.x + W} ${b.y + H / 2}`; }
    svg.append(h('path', { d, class: edge.kind, 'marker-end': 'url(#arrow)' }, h('title', {}, `${edge.from} → ${edge.to} (${edge.kind})`)));
  }
  for (const node of machine.nodes) {
    const c = machine.counts[node.name];
    const cls = node.name === machine.current ? 'current' : c?.failed ? 'failed' : '';
    svg.append(h('g', { 'data-state': node.name },
      h('rect', { x: node.x, y: node.y, width: W, height: H, class: cls }),
      h('text', { x: node.x + 8, y: node.y + 18, class: 'name' }, node.name.length > 26 ? `${node.name.slice(0, 25)}…` : node.name),
      h('text', { x: node.x + 8, y: node.y + 36, class: 'counts' }, c ? `entered ${c.entered} · retried ${c.retried} · failed ${c.failed}` : node.type),
      h('title', {}, `${node.name} (${node.type})${c ? `\nentered ${c.entered}, retried ${c.retried}, failed ${c.failed}${Object.keys(c.errors).length ? `\n${Object.entries(c.errors).map(([e, n]) => `${e}: ${n}`).join('\n')}` : ''}` : ''}`)));
  }
  return h('div', { class: 'graph' }, svg);
}

// ---- frame --------------------------------------------------------------------------------------

function renderGlobalKill() {
  const el = document.getElementById('global-kill');
  el.replaceChildren();
  if (info.globalKill) {
    el.append(h('span', { class: 'badge failed' }, `global kill on (${info.globalKill.by})`), ' ');
    if (!info.readOnly) el.append(h('button', { 'data-testid': 'lift-kill', onclick: () => steer('Lift the global kill switch? Runs may take steps again.', 'kill-all', { on: false }, () => 'Global kill switch lifted', { reason: false }) }, 'Lift'));
  } else if (!info.readOnly) {
    el.append(h('button', { class: 'danger', 'data-testid': 'kill-all', onclick: () => steer('Kill every run? Each stops before its next step, until the switch is lifted.', 'kill-all', { on: true }, () => 'Global kill switch on') }, 'Kill all runs'));
  } else el.append(h('span', { class: 'muted' }, 'read-only'));
}

let rendering = false, again = false;
async function render() {
  if (rendering) { again = true; return; }
  rendering = true;
  try {
    info = await api('info');
    document.getElementById('agent').textContent = [info.agent ? `agent ${info.agent}` : '', info.where ?? ''].filter(Boolean).join(' · ');
    renderGlobalKill();
    const route = location.hash.match(/^#\/run\/([^?]+)/);
    const content = route ? await renderRun(decodeURIComponent(route[1])) : await renderRuns();
    const scroll = window.scrollY;
    main.replaceChildren(...[content].flat(3).filter((c) => c !== '' && c !== undefined));
    window.scrollTo(0, scroll);
    main.dataset.version = String(info.version);
  } catch (error) {
    main.replaceChildren(h('p', { class: 'error' }, error.status === 403 || error.gone ? `${error.message}` : `Could not load: ${error.message}`));
  } finally {
    rendering = false;
    if (again) { again = false; render(); }
  }
}

window.addEventListener('hashchange', () => {
  // The printed address opened again in this tab: a new token (a new console) replaces the old one.
  if (adoptToken()) listen();
  runPage = { runId: '', page: 0 }; window.scrollTo(0, 0); render();
  follow();
});
render();

// Live: the server pushes its version on every change; polling the version is the fallback.
let seen = -1;
const live = document.getElementById('live');
// At most one refresh every 500 ms however fast the engine goes (a refresh reads the whole run).
let lastRender = 0, pending;
const refreshSoon = () => {
  if (pending) return;
  pending = setTimeout(() => { pending = undefined; lastRender = Date.now(); render(); }, Math.max(0, lastRender + 500 - Date.now()));
};
const followedRun = () => { const route = location.hash.match(/^#\/run\/([^?]+)/); return route ? decodeURIComponent(route[1]) : undefined; };
const onVersion = (version) => {
  if (version === seen) return;
  seen = version;
  // A run's view follows its own event stream (below), not the version.
  if (followedRun() === undefined) refreshSoon();
};
// The stream opens with a single-use ticket taken with the token (EventSource sends no header); a
// dropped stream is not reopened by the browser with the spent ticket but here, with a new one.
let events, reconnect;
async function listen() {
  events?.close();
  clearTimeout(reconnect);
  let ticket;
  try {
    ({ ticket } = await api('stream-ticket'));
  } catch {
    reconnect = setTimeout(listen, 3000);
    return;
  }
  events = new EventSource(`/api/events?ticket=${encodeURIComponent(ticket)}`);
  events.addEventListener('version', (e) => { live.classList.add('on'); onVersion(Number(e.data)); });
  events.onerror = () => {
    live.classList.remove('on');
    events.close();
    reconnect = setTimeout(listen, 3000);
  };
}
listen();
setInterval(() => { if (!live.classList.contains('on')) api('version').then((v) => onVersion(v.version)).catch(() => undefined); }, 3000);

// A run's view follows the run through its event stream (GET /api/runs/{id}/events: the runs API's
// stream, the same events every client gets): each event refreshes the view, and the stream ends
// after the run's last. A dropped stream is opened again with a new ticket, after the last event
// seen (the browser's own reconnection would send the spent ticket).
const RUN_EVENT_TYPES = ['run.started', 'execution.attached', 'model.turn', 'budget', 'approval.waiting', 'approval.decided', 'tool.started', 'tool.result', 'tool.refused', 'run.finished'];
let runEvents, runReconnect, following;
async function follow() {
  const runId = followedRun();
  if (runId !== following?.runId) { runEvents?.close(); clearTimeout(runReconnect); following = runId === undefined ? undefined : { runId, last: undefined, done: false }; }
  if (!following || following.done || (runEvents && runEvents.readyState !== EventSource.CLOSED)) return;
  const mine = following;
  let ticket;
  try {
    ({ ticket } = await api('stream-ticket'));
  } catch {
    runReconnect = setTimeout(follow, 3000);
    return;
  }
  if (following !== mine) return;
  const after = mine.last ? `&after=${encodeURIComponent(mine.last)}` : '';
  runEvents = new EventSource(`/api/runs/${encodeURIComponent(mine.runId)}/events?ticket=${encodeURIComponent(ticket)}${after}`);
  document.getElementById('main').dataset.following = mine.runId;
  for (const type of RUN_EVENT_TYPES) {
    runEvents.addEventListener(type, (event) => {
      mine.last = event.lastEventId;
      document.getElementById('main').dataset.lastEvent = event.lastEventId;
      if (type === 'run.finished') { mine.done = true; runEvents.close(); }
      refreshSoon();
    });
  }
  runEvents.onerror = () => {
    runEvents.close();
    if (!mine.done && following === mine) runReconnect = setTimeout(follow, 1000);
  };
}
follow();
