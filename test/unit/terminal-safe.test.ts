import { describe, expect, it } from 'vitest';
import { formatApproval, terminalSafe } from '../../cli/format.js';
import { progressPrinter } from '../../cli/progress.js';

describe('terminalSafe: nothing a model or a tool chose steers the terminal', () => {
  it.each([
    ['an erase-line and a hidden-text sequence', '$9,900.00\u001b[2K\u001b[8m', '$9,900.00\\u001b[2K\\u001b[8m'],
    ['a carriage return that rewinds the line', 'pay $9,900\r$5 coffee', 'pay $9,900\\u000d$5 coffee'],
    ['an 8-bit CSI (C1)', 'a\u009b2Kb', 'a\\u009b2Kb'],
    ['DEL and a bell', 'a\u007f\u0007', 'a\\u007f\\u0007'],
    ['a bidi override', 'refund \u202e00.5$', 'refund \\u202e00.5$'],
    ['a zero-width space and a BOM', 'a\u200bb\ufeff', 'a\\u200bb\\ufeff'],
    ['plain text, tabs and newlines', 'fine\ttext\nnext', 'fine\ttext\nnext'],
  ])('escapes %s', (_case, text, safe) => {
    expect(terminalSafe(text)).toBe(safe);
  });

  it('keeps a one-line field to one line', () => {
    expect(terminalSafe('a\nb', { oneLine: true })).toBe('a\\u000ab');
  });

  it('leaves JSON meaning the same: the escape is JSON’s own', () => {
    const value = { summary: 'x\u009by\u202e' };
    expect(JSON.parse(terminalSafe(JSON.stringify(value)))).toEqual(value);
  });

  it('prints an approval whose summary forges a line and hides its amount, as it is', () => {
    const line = formatApproval({
      approvalId: 'apv_1',
      runId: 'r',
      turn: 1,
      call: 1,
      toolName: 'issue_refund',
      status: 'pending',
      summary: 'issue_refund $9,900.00\u001b[2K\r\u001b[8m\nissue_refund $5.00 for office coffee',
      decideBy: '2026-12-01T00:00:00Z',
      requestedAt: '2026-11-30T00:00:00Z',
    } as never);
    expect(line).not.toMatch(/[\u0000-\u0008\u000a-\u001f]/);
    expect(line).toContain('$9,900.00\\u001b[2K\\u000d\\u001b[8m\\u000aissue_refund $5.00');
  });

  it('progress lines escape the tool name and the error the model or tool chose', () => {
    const lines: string[] = [];
    const print = progressPrinter((line) => lines.push(line), 0);
    print({ type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'CallTool' } } as never);
    print({ type: 'TaskSucceeded', taskSucceededEventDetails: { output: JSON.stringify({ Payload: { turn: 1, name: 'x\u001b]0;owned\u0007', outcome: 'ok\nforged line' } }) } } as never);
    print({ type: 'TaskFailed', taskFailedEventDetails: { error: 'E\u001b[31m', cause: 'c\u001b[8m' } } as never);
    expect(lines.join('')).not.toMatch(/[\u0000-\u0008\u000a-\u001f]/);
    expect(lines[0]).toContain('x\\u001b]0;owned\\u0007 → ok\\u000aforged line');
  });

  it('prints no failure line for a call routed to its approval wait (Agent.ApprovalNeeded): the approval prints its own', () => {
    const lines: string[] = [];
    const print = progressPrinter((line) => lines.push(line), 0);
    print({ type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'CallTool' } } as never);
    print({ type: 'TaskFailed', taskFailedEventDetails: { error: 'Agent.ApprovalNeeded', cause: 'needs an approval: asking for it' } } as never);
    expect(lines).toEqual([]);
    print({ type: 'TaskFailed', taskFailedEventDetails: { error: 'Agent.Transient', cause: 'socket hang up' } } as never);
    expect(lines).toEqual([expect.stringMatching(/CallTool failed: Agent\.Transient — socket hang up$/)]);
  });

  it("prints a Lambda error's message, not the JSON of its cause with the stack", () => {
    const lines: string[] = [];
    const print = progressPrinter((line) => lines.push(line), 0);
    print({ type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'CallModel' } } as never);
    const cause = JSON.stringify({ errorType: 'Agent.Transient', errorMessage: 'anthropic model call failed: timed out', trace: ['Agent.Transient: anthropic model call failed: timed out', '    at callModel (call-model.ts:1:1)'] });
    print({ type: 'TaskFailed', taskFailedEventDetails: { error: 'Agent.Transient', cause } } as never);
    expect(lines).toEqual([expect.stringMatching(/ {2}CallModel failed: Agent\.Transient — anthropic model call failed: timed out$/)]);
  });
});
