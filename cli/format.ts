import type { BreakerState } from '../lambdas/records/breaker-state.js';
import type { RunReport } from '../lambdas/runs/report.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';
import { GUARDS } from '../lambdas/records/guards.js';
import { counted } from '../lambdas/shared/text.js';
import { formatAmount } from '../lambdas/shared/money.js';
import type { StateSummary } from '../local/engine/local-engine.js';

/**
 * Text safe to print on a terminal. What a model or a tool chose (a summary, a tool name, an id, a
 * reason, an error's cause) reaches the CLI's output, and a terminal obeys control sequences in
 * it: `ESC[2K` erases the line, `ESC[8m` hides what follows, `\r` rewinds, a bidi override
 * reorders — a $9,900.00 approval prompt can be made to read "$5.00 for office coffee". So every
 * C0 and C1 control, DEL, and the invisible bidi and zero-width format characters become visible
 * escapes (`\u001b`); only a newline and a tab are kept, and with `oneLine` the newline too. In
 * JSON output the escape is JSON's own, so the data reads back the same.
 */
export function terminalSafe(text: string, options: { oneLine?: boolean } = {}): string {
  const unsafe = options.oneLine ? UNSAFE_IN_A_LINE : UNSAFE;
  return text.replace(unsafe, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// C0 (but \t and \n), DEL and C1; the bidi embeddings, overrides and isolates; zero-width and BOM.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const UNSAFE_IN_A_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** What the execution did, from its history: Lambda invocations including retries, per state. */
export interface ExecutionFigures {
  executionArn: string;
  status: string;
  lambdaInvocations: number;
  /** Invocations that re-ran a state after a failure (Retry), per the history. */
  retries: number;
  states: Record<string, { entered: number; invocations: number; failures: number; errors: Record<string, number> }>;
}

export function executionFigures(executionArn: string, status: string, summary: Record<string, StateSummary>): ExecutionFigures {
  const states = Object.fromEntries(
    Object.entries(summary)
      .filter(([, state]) => state.invocations > 0)
      .map(([name, state]) => [name, { entered: state.entered, invocations: state.invocations, failures: state.failures, errors: state.errors }]),
  );
  // Only Task states invoke Lambda functions; Choice and Succeed states are entered, never invoked.
  const tasks = Object.values(summary).filter((state) => state.invocations > 0);
  const sum = (pick: (state: StateSummary) => number) => tasks.reduce((total, state) => total + pick(state), 0);
  return {
    executionArn,
    status,
    lambdaInvocations: sum((state) => state.invocations),
    retries: sum((state) => state.invocations - state.entered),
    states,
  };
}

/** The most of a run's input a report's first line shows: a long input is cut, its size said. */
const SHOWN_INPUT_CHARACTERS = 200;

/** `value` as JSON on one line, cut after SHOWN_INPUT_CHARACTERS with its whole size in bytes. */
function shownJson(value: unknown): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.length <= SHOWN_INPUT_CHARACTERS ? json : `${json.slice(0, SHOWN_INPUT_CHARACTERS)}… (${Buffer.byteLength(json, 'utf8')} bytes)`;
}

const money = (dollars: number) => `$${dollars.toFixed(4)}`;
const row = (label: string, value: string) => `  ${label.padEnd(22)} ${value}`;

export function formatReport(report: RunReport, execution?: ExecutionFigures): string {
  const lines = [
    '',
    `run ${report.runId} (${report.agent} ${shownJson(report.input)}): ${report.status}${report.stopReason ? ` — ${report.stopReason}` : ''}`,
    row('agent steps', `${report.steps} (${counted(report.modelTurns, 'model turn')}, ${counted(report.toolCalls, 'tool call')})`),
  ];
  if (execution) {
    const retried = Object.entries(execution.states)
      .filter(([, state]) => state.invocations > state.entered)
      .map(([name, state]) => `${name} ${state.invocations - state.entered}`)
      .join(', ');
    lines.push(row('Lambda executions', `${execution.lambdaInvocations} (${execution.retries} retries${retried ? `: ${retried}` : ''})`));
  }
  if (report.summary) {
    lines.push(`  ${report.agent}`);
    for (const [label, value] of Object.entries(report.summary)) lines.push(row(`  ${label}`, String(value)));
  }
  if (report.wouldHave) {
    lines.push('  would have (a dry fork: its writes were not sent)');
    for (const [label, value] of Object.entries(report.wouldHave)) lines.push(row(`  ${label}`, String(value)));
  }
  lines.push('  tool calls (ok / error / refused · guarantee)');
  for (const [name, tool] of Object.entries(report.tools)) {
    if (tool.calls === 0) continue;
    const refused = tool.rejected + tool.expired;
    lines.push(row(`  ${name}`, `${tool.ok} / ${tool.error} / ${refused}${tool.inFlight ? ` (${tool.inFlight} in flight)` : ''} · ${tool.guarantee}${tool.condition ? ` (${tool.condition})` : ''}`));
  }
  lines.push(...childRunLines(report.children ?? [], 1));
  lines.push(
    row('approvals', `${report.approvals.total} (${report.approvals.approved} approved, ${report.approvals.rejected} rejected, ${report.approvals.expired} expired, ${report.approvals.pending} pending${report.approvals.unverified ? `, ${report.approvals.unverified} unverified (refused)` : ''})`),
    row('model', formatModels(report)),
    row('tokens', `${report.tokens.total} (${report.tokens.input} in of which ${report.tokens.cachedInput} cached, ${report.tokens.output} out)`),
    row('cost', money(report.dollars)),
    row('wall time', `${report.wallSeconds.toFixed(1)} s`),
    '  guards (used / limit)',
    ...GUARDS.map((guard) => row(`  ${guard.label}`, guard.report(report.guards[guard.figure]))),
    row('  waiting for people', `${report.guards.approvalWaitSeconds} s (not counted)`),
    ...report.guardEvents.map((event) => row(`  ${event.action}`, `${event.guard} at ${event.at}: ${event.reason}`)),
  );
  if (report.executions > 1) {
    const recovered = report.recovery ? `; ${report.recovery.attempts} automatic recover${report.recovery.attempts === 1 ? 'y' : 'ies'}, last after ${report.recovery.reason}` : '';
    const handoffs = report.chain.filter((link) => link.via === 'handoff').length;
    const migrations = report.chain.filter((link) => link.via === 'migrate').length;
    const resumed = report.executions - 1 - handoffs - migrations;
    const parts = [
      ...(handoffs > 0 ? [`continued as new ${handoffs} time(s)`] : []),
      ...(migrations > 0 ? [`migrated ${migrations} time(s)`] : []),
      ...(resumed > 0 || handoffs + migrations === 0 ? [`resumed ${resumed} time(s)${recovered}`] : []),
    ];
    lines.push(row('executions', `${report.executions} (${parts.join('; ')})`));
    if (handoffs > 0) lines.push(row('  chain', report.chain.map((link) => `${link.name} (${link.via})`).join(' → ')));
  }
  lines.push(...formatVersion(report));
  if (report.inFlight > 0) lines.push(row('in flight', `${report.inFlight} tool call(s) left in flight`));
  if (report.error) lines.push(row('error', `${report.error.error}: ${report.error.cause}`));
  return lines.join('\n');
}

export function formatApproval(approval: Omit<ApprovalRecord, 'kind'> & { links?: { approver: string; url: string }[] }): string {
  const amount = approval.amount ? `  ${formatAmount(approval.amount)}` : '';
  const links = (approval.links ?? []).map((link) => `\n    decide (${link.approver}): ${link.url}`).join('');
  // Each field on its own line's terms: a newline in a summary must not forge a line of its own.
  return `${terminalSafe(approval.approvalId, { oneLine: true })}  ${approval.status.padEnd(8)} ${terminalSafe(approval.summary, { oneLine: true })}${amount}  decide by ${approval.decideBy}${terminalSafe(links)}`;
}

export function formatBreaker(breaker: BreakerState): string {
  const trip = breaker.lastTrip ? `, last trip ${breaker.lastTrip.at}: ${breaker.lastTrip.reason}` : '';
  return `${breaker.name.padEnd(10)} ${breaker.state.padEnd(9)} ${breaker.trips} trip(s)${breaker.openedAt && breaker.state !== 'closed' ? `, open since ${breaker.openedAt}` : ''}${trip}`;
}

/** The run's model, and the turns each model answered when a fallback answered some. */
function formatModels(report: RunReport): string {
  const others = Object.entries(report.turnsByModel ?? {}).filter(([model]) => model !== report.model);
  if (others.length === 0) return report.model;
  const own = report.turnsByModel[report.model] ?? 0;
  return `${report.model} (${own} turns; fallback: ${others.map(([model, turns]) => `${model} ${turns} turns`).join(', ')})`;
}

/** The code the run is bound to, the turns each fingerprint recorded when more than one did, and each migration. */
function formatVersion(report: RunReport): string[] {
  const version = report.version;
  if (!version) return [];
  const bound = `${version.agentVersion === undefined ? '' : `${version.agentVersion} `}(${version.fingerprint})`;
  const byCode = Object.entries(version.turnsByFingerprint);
  const lines = [row('version', byCode.length > 1 ? `${bound}; turns by code: ${byCode.map(([fingerprint, turns]) => `${fingerprint} ${turns}`).join(', ')}` : bound)];
  for (const migration of version.migrations) {
    const from = `${migration.from.version ?? ''} (${migration.from.fingerprint})`.trim();
    const to = `${migration.to.version ?? ''} (${migration.to.fingerprint})`.trim();
    lines.push(row('  migrated', `${from} → ${to} by ${migration.by} at ${migration.at}`));
  }
  return lines;
}

/** The tree of a run's child runs, one a line, each level indented below its parent. */
function childRunLines(children: NonNullable<RunReport['children']>, depth: number): string[] {
  return children.flatMap((child) => [
    row(`${'  '.repeat(depth)}child run`, `${child.runId} (${child.agent}, by ${child.tool} at ${child.turn}/${child.call}): ${child.status}`),
    ...childRunLines(child.children ?? [], depth + 1),
  ]);
}
