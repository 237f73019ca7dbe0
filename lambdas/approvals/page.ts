import type { Ledger } from '../ledger/ledger.js';
import { resolveResults } from '../ledger/blobs.js';
import type { ApprovalRecord, ToolCallRecord } from '../records/ledger-records.js';
import { formatAmount } from '../shared/money.js';

/**
 * The approval page: server-rendered HTML, no build step, no outside assets. It shows what the
 * agent wants to do and why — the tool, the arguments in words, the amount, the evidence (the
 * run's earlier read results that mention the same things), the run and the deadline — and
 * decides only by a POST from its buttons: opening the link (a mail scanner, a link preview) never
 * decides.
 */
export interface ApprovalView {
  approval: Omit<ApprovalRecord, 'kind'>;
  args?: Record<string, unknown>;
  evidence: { tool: string; turn: number; args: string; result: string }[];
  approver: string;
  link: string;
  /** Where the page POSTs the decision (same origin). */
  postUrl: string;
}

const MAX_EVIDENCE = 6;
const MAX_RESULT = 600;

/** The run's completed read calls up to the approval's turn that mention what the approval is about. */
export async function evidenceFor(ledger: Ledger, approval: ApprovalRecord): Promise<ApprovalView['evidence']> {
  const { calls } = await ledger.listConversation(approval.runId);
  const reads = await resolveResults(ledger, calls.filter((call) => call.effect === 'read' && call.status === 'completed' && call.turn <= approval.turn));
  const needles = Object.values(approval.details ?? {}).filter((value): value is string => typeof value === 'string' && /^[A-Za-z0-9_-]{4,}$/.test(value));
  const mentions = (call: ToolCallRecord) => needles.some((needle) => JSON.stringify(call.args).includes(needle) || (call.result ?? '').includes(needle));
  const relevant = needles.length > 0 ? reads.filter(mentions) : reads.filter((call) => call.turn >= approval.turn - 1);
  return relevant.slice(-MAX_EVIDENCE).map((call) => ({
    tool: call.name,
    turn: call.turn,
    args: JSON.stringify(call.args),
    result: excerpt(call.result ?? '', needles, MAX_RESULT),
  }));
}

/** At most `max` characters of `text`, around the first thing the approval is about when it is far in. */
function excerpt(text: string, needles: string[], max: number): string {
  if (text.length <= max) return text;
  const at = Math.min(...needles.map((needle) => text.indexOf(needle)).filter((index) => index >= 0), Infinity);
  const start = at === Infinity || at < max / 2 ? 0 : Math.min(at - 80, text.length - max);
  return `${start > 0 ? '…' : ''}${text.slice(start, start + max)}${start + max < text.length ? '…' : ''}`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.35rem}dl{display:grid;grid-template-columns:9rem 1fr;gap:.35rem 1rem}dt{color:#666}dd{margin:0}
.amount{font-size:1.6rem;font-weight:600}.evidence{border-left:3px solid #ccd;padding:.2rem .8rem;margin:.5rem 0;background:#f7f7fb}
code{font-size:.85em;word-break:break-all}textarea{width:100%;min-height:3rem}button{font:inherit;padding:.5rem 1.2rem;margin:.6rem .6rem 0 0;border-radius:6px;border:1px solid #999;cursor:pointer}
#approve{background:#1a7f37;color:#fff;border-color:#1a7f37}#reject{background:#fff;color:#b42318;border-color:#b42318}
#result{margin-top:1rem;font-weight:600}.refused{color:#b42318}.done{color:#1a7f37}`;

/**
 * The page's heading and title: only what the harness itself knows — the tool, the amount the rule
 * put on it, the run — never text the model could have chosen (the red team's "$5.00 for office
 * coffee" above a $725.00 amount line).
 */
export function heading(approval: Pick<ApprovalRecord, 'toolName' | 'amount' | 'runId'>): string {
  return `Approve ${approval.toolName}${approval.amount ? ` of ${formatAmount(approval.amount)}` : ''} in run ${approval.runId}`;
}

export function renderApprovalPage(view: ApprovalView): string {
  const { approval } = view;
  const rows: [string, string][] = [
    ['Tool', `<code>${escapeHtml(approval.toolName)}</code>`],
    // The rule's summary may quote what the model wrote (a reason, a note): a row, never the heading.
    ['Summary', escapeHtml(approval.summary)],
    ...(approval.description ? [['In words', escapeHtml(approval.description)] as [string, string]] : []),
    ...Object.entries(approval.details ?? {}).map(([key, value]) => [escapeHtml(key), escapeHtml(String(value))] as [string, string]),
    ...(view.args ? [['Arguments', `<code>${escapeHtml(JSON.stringify(view.args))}</code>`] as [string, string]] : []),
    ['Run', `<code>${escapeHtml(approval.runId)}</code>`],
    ['Decide by', `<time datetime="${escapeHtml(approval.decideBy)}">${escapeHtml(approval.decideBy)}</time>`],
    ['You are', escapeHtml(view.approver)],
  ];
  const pending = approval.status === 'pending';
  const evidence = view.evidence.length
    ? view.evidence
        .map((item) => `<div class="evidence"><div><code>${escapeHtml(item.tool)}</code> (turn ${item.turn}) <code>${escapeHtml(item.args)}</code></div><div><code>${escapeHtml(item.result)}</code></div></div>`)
        .join('\n')
    : '<p>No earlier results of this run mention it.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(heading(approval))}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(heading(approval))}</h1>
${approval.amount ? `<p class="amount" id="amount">${escapeHtml(formatAmount(approval.amount))}</p>` : ''}
<dl>${rows.map(([key, value]) => `<dt>${key}</dt><dd>${value}</dd>`).join('')}</dl>
${approval.firstApproval ? `<p>Approved first by ${escapeHtml(approval.firstApproval.by)}; a second person must approve.</p>` : ''}
<h2>Evidence the agent gathered</h2>
${evidence}
${
  pending
    ? `<form id="decision"><label for="reason">Reason (optional)</label><textarea id="reason" maxlength="500"></textarea>
<button type="button" id="approve" data-decision="approve">Approve</button><button type="button" id="reject" data-decision="reject">Reject</button></form>`
    : // Why, too: a rejection by a kill ("run killed by …") or an expiry is not a person's verdict on the call.
      `<p id="status">This approval is ${escapeHtml(approval.status)}${approval.decidedBy ? ` by ${escapeHtml(approval.decidedBy)}` : ''}${approval.reason ? `: ${escapeHtml(approval.reason)}` : ''}.</p>`
}
<p id="result" role="status"></p>
<script>
const link = ${JSON.stringify(view.link).replace(/</g, '\\u003c')};
for (const button of document.querySelectorAll('button[data-decision]')) {
  button.addEventListener('click', async () => {
    const result = document.getElementById('result');
    const body = { decision: button.dataset.decision, link };
    const reason = document.getElementById('reason').value.trim();
    if (reason) body.reason = reason;
    const response = await fetch(${JSON.stringify(view.postUrl).replace(/</g, '\\u003c')}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json().catch(() => ({ message: response.statusText }));
    result.className = response.ok ? 'done' : 'refused';
    result.textContent = response.ok
      ? (answer.waitingForSecond ? 'Recorded: a second approver must approve too.' : 'Done: ' + answer.status + ' by ' + answer.decidedBy + '.')
      : 'Refused (' + response.status + '): ' + answer.message;
  });
}
</script>
</body></html>`;
}

export function renderErrorPage(status: number, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status}</title><style>${STYLE}</style></head>
<body><h1>This link cannot be used</h1><p class="refused" id="result">${status}: ${escapeHtml(message)}</p></body></html>`;
}
