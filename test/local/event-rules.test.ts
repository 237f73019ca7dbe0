import { describe, expect, it } from 'vitest';
import { checkEventPattern, EVENT_PATTERN_MAX_CHARS, matchesEventPattern } from '../../local/aws/event-bus.js';

/**
 * The twin matches the template's rules on executions' status changes as EventBridge does, in the
 * forms the stack relies on (exact values, `prefix`), and refuses a pattern over EventBridge's
 * default size quota or in a form it does not evaluate: InvalidEventPatternException.
 */
const machine = (stack: string, agent: string) => `arn:aws:states:us-east-1:000000000000:stateMachine:${stack}-${agent}`;
const ended = (stateMachineArn: string, status = 'FAILED') => ({
  source: 'aws.states',
  'detail-type': 'Step Functions Execution Status Change',
  detail: { status, stateMachineArn, executionArn: `${stateMachineArn.replace(':stateMachine:', ':execution:')}:run-1` },
});
const byPrefix = (prefix: string, status: string[]) =>
  checkEventPattern({ source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'], detail: { status, stateMachineArn: [{ prefix }] } }, 'rule Test');

describe("EventBridge's event patterns in the twin", () => {
  it('matches the executions of every agent of the stack by the prefix of their state machine, in the statuses named', () => {
    const pattern = byPrefix(machine('Fleet', ''), ['FAILED', 'TIMED_OUT']);
    for (const agent of ['agent-0', 'agent-19']) expect(matchesEventPattern(pattern, ended(machine('Fleet', agent))), agent).toBe(true);
    expect(matchesEventPattern(pattern, ended(machine('Fleet', 'agent-0'), 'ABORTED'))).toBe(false);
    expect(matchesEventPattern(pattern, ended(machine('Other', 'agent-0')))).toBe(false);
    expect(matchesEventPattern(pattern, { ...ended(machine('Fleet', 'agent-0')), source: 'aws.events' })).toBe(false);
    // A field the pattern names must be there.
    expect(matchesEventPattern(pattern, { source: 'aws.states', 'detail-type': 'Step Functions Execution Status Change', detail: { status: 'FAILED' } })).toBe(false);
  });

  it('matches a listed value exactly', () => {
    const pattern = checkEventPattern({ detail: { stateMachineArn: [machine('Fleet', 'child')] } }, 'rule Test');
    expect(matchesEventPattern(pattern, ended(machine('Fleet', 'child')))).toBe(true);
    expect(matchesEventPattern(pattern, ended(machine('Fleet', 'child-2')))).toBe(false);
  });

  it(`refuses a pattern over ${EVENT_PATTERN_MAX_CHARS} characters (InvalidEventPatternException): twenty agents' ARNs listed one by one pass it, their prefix does not`, () => {
    const listed = { source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'], detail: { status: ['FAILED', 'TIMED_OUT'], stateMachineArn: Array.from({ length: 20 }, (_, index) => machine('refund-reconcilers-production', `refund-reconciler-${index}`)) } };
    expect(JSON.stringify(listed).length).toBeGreaterThan(EVENT_PATTERN_MAX_CHARS);
    expect(() => checkEventPattern(listed, 'rule Listed')).toThrow(expect.objectContaining({ name: 'InvalidEventPatternException', message: expect.stringMatching(/^rule Listed: the event pattern is \d+ characters, over EventBridge's 2048/) }));
    expect(() => byPrefix(machine('refund-reconcilers-production', ''), ['FAILED', 'TIMED_OUT'])).not.toThrow();
  });

  it('refuses a filter it does not evaluate, and an empty list, rather than guess what EventBridge would match', () => {
    expect(() => checkEventPattern({ detail: { status: [{ 'anything-but': 'ABORTED' }] } }, 'rule Other')).toThrow(expect.objectContaining({ name: 'InvalidEventPatternException', message: expect.stringContaining('detail.status') }));
    expect(() => checkEventPattern({ detail: { status: [] } }, 'rule Empty')).toThrow(expect.objectContaining({ name: 'InvalidEventPatternException' }));
  });
});
