/**
 * The approval notifier's requests against SNS's and EventBridge's request rules: the subject of an
 * SNS Publish is made from the tool's summary (often the model's words), and SNS refuses a whole
 * Publish for a subject with a line break, a control character or 100 characters — the approvers
 * are then never told. The twin builds the very requests the AWS notifier sends
 * (notificationRequests) and refuses what AWS refuses (local/aws/notification-requests.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { notificationRequests, snsSubject, type ApprovalRequested, type EventEntry, type TopicMessage } from '../../lambdas/approvals/notify.js';
import { checkPublish, checkPutEvents } from '../../local/aws/notification-requests.js';
import { approvalsAs } from '../../local/aws/iam/services.js';

const TOPIC = 'arn:aws:sns:us-east-1:000000000000:approvals';
const request = (summary: string, approvers = 1): ApprovalRequested => ({
  approvalId: 'apv_1',
  runId: 'run-1',
  toolName: 'issue_refund',
  summary,
  amount: { minor: 129_900, currency: 'USD' },
  decideBy: '2026-12-02T10:00:00.000Z',
  links: Array.from({ length: approvers }, (_, i) => ({ approver: `approver${i}@example.com`, url: `https://approve.example/${i}` })),
});
const message = (Subject: string): TopicMessage => ({ TopicArn: TOPIC, Subject, Message: 'body' });
const entry = (Detail: string): EventEntry => ({ Source: 'savepoint.approvals', DetailType: 'Approval Requested', Detail });

describe('SNS Publish, as the twin holds it to SNS’s rules', () => {
  it('refuses a subject with a line break, a control character, a non-ASCII character or 100 characters', () => {
    for (const subject of ['Approval needed: refund\nfor order 7', 'tab\there', 'Approval needed: €5', 'x'.repeat(100), ' leading space', '']) {
      expect(() => checkPublish(message(subject)), JSON.stringify(subject)).toThrow(expect.objectContaining({ name: 'InvalidParameterException', statusCode: 400 }));
    }
    expect(() => checkPublish(message('x'.repeat(99)))).not.toThrow();
  });

  it('refused the subject the notifier built before (the summary cut at 99 characters, line breaks kept)', () => {
    const before = `Approval needed: ${'Refund $1,299.00 to Ada\nreason: duplicate charge'}`.slice(0, 99);
    expect(() => checkPublish(message(before))).toThrow('Invalid parameter: Subject');
  });

  it('refuses a message over 256 KB, an empty message and an empty message attribute', () => {
    expect(() => checkPublish({ ...message('ok'), Message: 'x'.repeat(256 * 1024 + 1) })).toThrow(expect.objectContaining({ name: 'InvalidParameterException' }));
    expect(() => checkPublish({ ...message('ok'), Message: 'x'.repeat(256 * 1024) })).not.toThrow();
    expect(() => checkPublish({ ...message('ok'), Message: '' })).toThrow(expect.objectContaining({ name: 'InvalidParameterException' }));
    expect(() => checkPublish({ ...message('ok'), MessageAttributes: { approver: { DataType: 'String', StringValue: '' } } })).toThrow(/approver/);
  });

  it('takes every subject snsSubject makes, whatever the summary', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (summary) => {
        const subject = snsSubject(`Approval needed: ${summary}`);
        checkPublish(message(subject));
        expect(subject.startsWith('Approval needed:')).toBe(true);
      }),
      { numRuns: 500 },
    );
    expect(() => checkPublish(message(snsSubject('\u0000')))).not.toThrow();
  });

  it('keeps a summary readable: line breaks become spaces, accents go, long ones end in ...', () => {
    expect(snsSubject('Approval needed: refund\r\nfor  Zoë\t(order 7)')).toBe('Approval needed: refund for Zoe (order 7)');
    const long = snsSubject(`Approval needed: ${'word '.repeat(40)}`);
    expect(long).toHaveLength(99);
    expect(long.endsWith('...')).toBe(true);
  });
});

describe('EventBridge PutEvents, as the twin holds it to EventBridge’s rules', () => {
  it('refuses more than 10 entries, none, or entries of 256 KB together', () => {
    expect(() => checkPutEvents([])).toThrow(expect.objectContaining({ name: 'ValidationException' }));
    expect(() => checkPutEvents(Array.from({ length: 11 }, () => entry('{}')))).toThrow(/between 1 and 10/);
    expect(() => checkPutEvents([entry(JSON.stringify({ x: 'x'.repeat(256 * 1024) }))])).toThrow(expect.objectContaining({ name: 'ValidationException' }));
    expect(checkPutEvents(Array.from({ length: 10 }, () => entry('{}')))).toEqual([]);
  });

  it('fails an entry whose Detail is not a JSON object, and only that entry', () => {
    expect(checkPutEvents([entry('{}'), entry('[1]'), entry('not json')])).toEqual([
      { index: 1, errorCode: 'MalformedDetail' },
      { index: 2, errorCode: 'MalformedDetail' },
    ]);
  });
});

describe('the notifier’s requests', () => {
  it('are one event with no link and one message per approver with their link, each within the rules', () => {
    const requests = notificationRequests(request('Refund $1,299.00\nto Ada', 12), { busName: 'default', topicArn: TOPIC });
    expect(requests.putEvents.map((batch) => batch.length)).toEqual([1]);
    for (const batch of requests.putEvents) expect(checkPutEvents(batch)).toEqual([]);
    expect(requests.publish).toHaveLength(12);
    for (const published of requests.publish) checkPublish(published);
    expect(requests.publish[0]).toMatchObject({ Subject: 'Approval needed: Refund $1,299.00 to Ada', MessageAttributes: { approver: { StringValue: 'approver0@example.com' } } });
    expect(requests.putEvents[0]![0]!.Detail).not.toContain('https://approve.example/');
    expect(requests.publish[11]!.Message).toContain('https://approve.example/11');
    expect(requests.publish.filter((message) => message.Message.includes('https://approve.example/11'))).toHaveLength(1);
  });

  it('go out from the twin for a summary with a line break: authorized, then checked, nothing refused', async () => {
    const authorized: string[] = [];
    const setup = approvalsAs(
      'RequestApproval',
      {},
      { authorizeAs: (_step, { action }) => void authorized.push(action), servicesOf: () => ({ APPROVAL_EVENT_BUS: 'default', APPROVAL_TOPIC_ARN: TOPIC }) },
    );
    await setup.notifier!.approvalRequested(request('Refund $1,299.00\nto Ada', 2));
    expect(authorized).toEqual(['events:PutEvents', 'sns:Publish', 'sns:Publish']);
  });
});
