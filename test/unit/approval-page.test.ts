import { describe, expect, it } from 'vitest';
import { renderApprovalPage } from '../../lambdas/approvals/page.js';

/**
 * The approval page's heading and title are what the harness knows (the tool, the amount, the run),
 * never text a rule may have copied from the model's arguments: the red team's page showed
 * "$5.00 for office coffee" as its heading above a $725.00 amount line.
 */
describe('the approval page heading', () => {
  const page = renderApprovalPage({
    approval: {
      approvalId: 'apv_1',
      runId: 'run-1',
      turn: 2,
      call: 1,
      toolName: 'issue_refund',
      summary: '$5.00 for office coffee',
      amount: { minor: 72_500, currency: 'usd' },
      status: 'pending',
      decideBy: '2026-12-02T03:00:00.000Z',
      createdAt: '2026-12-02T02:00:00.000Z',
    },
    evidence: [],
    approver: 'alice@example.com',
    link: 'link',
    postUrl: '/v1/decide/apv_1',
  });
  const h1 = /<h1>([^<]*)<\/h1>/.exec(page)?.[1];
  const title = /<title>([^<]*)<\/title>/.exec(page)?.[1];

  it('names the tool, the amount and the run, never the model’s words', () => {
    expect(h1).toBe('Approve issue_refund of 725.00 USD in run run-1');
    expect(title).toBe(h1);
  });

  it('shows the rule’s summary as a row below the amount, escaped', () => {
    expect(page.indexOf('$5.00 for office coffee')).toBeGreaterThan(page.indexOf('id="amount"'));
    expect(page).toContain('<dt>Summary</dt><dd>$5.00 for office coffee</dd>');
  });
});

describe('the approval page amount', () => {
  const headingFor = (amount: { minor: number; currency: string }) =>
    /<h1>([^<]*)<\/h1>/.exec(
      renderApprovalPage({
        approval: { approvalId: 'apv_1', runId: 'run-1', turn: 2, call: 1, toolName: 'issue_refund', summary: 's', amount, status: 'pending', decideBy: '2026-12-02T03:00:00.000Z', createdAt: '2026-12-02T02:00:00.000Z' },
        evidence: [],
        approver: 'alice@example.com',
        link: 'link',
        postUrl: '/v1/decide/apv_1',
      }),
    )?.[1];

  it.each([
    [{ minor: 72_500, currency: 'usd' }, '725.00 USD'],
    [{ minor: 72_500, currency: 'jpy' }, '72500 JPY'], // a yen is its own minor unit (ISO 4217: no decimals)
    [{ minor: 72_500, currency: 'KRW' }, '72500 KRW'],
    [{ minor: 72_500, currency: 'kwd' }, '72.500 KWD'], // a dinar has a thousand fils
    [{ minor: 5, currency: 'eur' }, '0.05 EUR'],
  ])('reads %o in the currency’s own minor units: %s', (amount, shown) => {
    expect(headingFor(amount)).toBe(`Approve issue_refund of ${shown} in run run-1`);
  });
});

describe('the approval page of a decided approval', () => {
  it('says who decided it and why, escaped, and offers no buttons', () => {
    const page = renderApprovalPage({
      approval: {
        approvalId: 'apv_1', runId: 'run-1', turn: 2, call: 1, toolName: 'issue_refund', summary: 's', status: 'rejected', decideBy: '2026-12-02T03:00:00.000Z', createdAt: '2026-12-02T02:00:00.000Z',
        decidedBy: 'local:alice', decidedVia: 'cli', reason: 'run killed by local:alice: <b>wrong day</b>',
      },
      evidence: [],
      approver: 'bob@example.com',
      link: 'link',
      postUrl: '/v1/decide/apv_1',
    });
    expect(/<p id="status">([^\n]*)<\/p>/.exec(page)?.[1]).toBe('This approval is rejected by local:alice: run killed by local:alice: &lt;b&gt;wrong day&lt;/b&gt;.');
    expect(page).not.toContain('id="approve"');
  });
});
