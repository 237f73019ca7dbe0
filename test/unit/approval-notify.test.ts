import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SNSClient } from '@aws-sdk/client-sns';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventBridgeNotifier } from '../../lambdas/adapters/aws-approvals.js';
import { perApprover, type ApprovalRequested } from '../../lambdas/approvals/notify.js';

/**
 * Each approver receives only their own signed link: one SNS message per approver, naming them,
 * and one EventBridge event with no link at all, through the real SDK clients (to a loopback
 * stand-in that records what EventBridge and SNS were sent).
 */

const approvers = Array.from({ length: 12 }, (_, index) => `approver${index + 1}@example.com`);
const request: ApprovalRequested = {
  approvalId: 'apv_1',
  runId: 'refunds-2026-11-28',
  toolName: 'issue_refund',
  summary: 'issue_refund $725.00 for rr_007',
  amount: { minor: 72_500, currency: 'usd' },
  decideBy: '2026-11-29T02:00:00Z',
  links: approvers.map((approver, index) => ({ approver, url: `https://example.com/v1/decide/apv_1?link=secret-${index + 1}` })),
};

const received: { target?: string; body: string }[] = [];
let endpoint: string;
const server = createServer(async (incoming: IncomingMessage, outgoing) => {
  let body = '';
  for await (const chunk of incoming) body += String(chunk);
  const target = incoming.headers['x-amz-target'] as string | undefined;
  received.push({ ...(target && { target }), body });
  if (target === 'AWSEvents.PutEvents') {
    const entries = (JSON.parse(body) as { Entries: unknown[] }).Entries;
    outgoing.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ FailedEntryCount: 0, Entries: entries.map((_, index) => ({ EventId: `e${index}` })) }));
  } else {
    outgoing.writeHead(200, { 'content-type': 'text/xml' }).end('<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m</MessageId></PublishResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></PublishResponse>');
  }
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('approval notifications', () => {
  it('split a request into one event per approver, each with that approver’s link only', () => {
    const each = perApprover(request);
    expect(each).toHaveLength(12);
    for (const [index, event] of each.entries()) expect(event).toMatchObject({ approver: approvers[index], links: [request.links[index]] });
    expect(perApprover({ ...request, links: [] })).toEqual([{ ...request, links: [] }]);
  });

  it('on AWS: one event with no link on the bus, and one SNS message per approver with their link only, carrying the approver attribute a filter policy matches', async () => {
    const config = { region: 'us-east-1', endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
    const events = new EventBridgeClient(config);
    const sns = new SNSClient(config);
    try {
      await eventBridgeNotifier(events, { topicArn: 'arn:aws:sns:us-east-1:123456789012:approvals', sns: () => sns }).approvalRequested(request);
    } finally {
      events.destroy();
      sns.destroy();
    }
    const puts = received.filter((call) => call.target === 'AWSEvents.PutEvents').flatMap((call) => (JSON.parse(call.body) as { Entries: { Detail: string }[] }).Entries);
    expect(puts).toHaveLength(1);
    const detail = JSON.parse(puts[0]!.Detail) as Record<string, unknown>;
    expect(detail).toEqual({ approvalId: 'apv_1', runId: request.runId, toolName: request.toolName, summary: request.summary, amount: request.amount, decideBy: request.decideBy });
    expect(puts[0]!.Detail).not.toMatch(/secret-\d+/);
    const messages = received.filter((call) => call.target === undefined).map((call) => new URLSearchParams(call.body));
    expect(messages).toHaveLength(12);
    for (const [index, message] of messages.entries()) {
      expect(message.get('MessageAttributes.entry.1.Name')).toBe('approver');
      expect(message.get('MessageAttributes.entry.1.Value.StringValue')).toBe(approvers[index]);
      const text = message.get('Message')!;
      expect(text).toContain(`secret-${index + 1}`);
      expect(text.match(/secret-\d+/g)).toEqual([`secret-${index + 1}`]);
    }
  });
});
