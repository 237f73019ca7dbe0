import { describe, expect, it } from 'vitest';
import { startFrontDoor } from '../../cli/serve-front.js';
import { consoleProxy } from '../../console/proxy.js';

/**
 * The front door of a serve of several agents (cli/serve-front.ts) listens before their engines
 * start, so that their approval links can name its port: until serve hands it the engines, it
 * answers every request, the page's included, 503 with when to try again (never a route to nothing).
 */
describe('the front door before its engines', () => {
  it('answers 503 with Retry-After, and names its page on its own port', async () => {
    const front = await startFrontDoor();
    try {
      expect(front.pageUrl).toBe(`http://127.0.0.1:${front.port}/v1/decide`);
      for (const url of [front.runsUrl, `${front.pageUrl}/apv_0123456789ab?link=x`]) {
        const answered = await fetch(url);
        expect(answered.status, url).toBe(503);
        expect(answered.headers.get('retry-after')).toBe('1');
        expect(await answered.json()).toEqual({ message: 'savepoint serve is starting its engines: try again in a moment' });
      }
    } finally {
      await front.close();
    }
  });
});

describe('the front door of several engines', () => {
  it('refuses a start whose body is no JSON for what it is (400 naming the body), not as one that names no agent', async () => {
    const front = await startFrontDoor();
    // Engines nobody reaches: a body the front door can route by never gets to one.
    const nowhere = (name: string) => ({ name, runs: `http://127.0.0.1:9/${name}/v1/runs`, approvals: `http://127.0.0.1:9/${name}/v1/approvals` });
    front.serve([nowhere('notes'), nowhere('triage')]);
    try {
      for (const url of [front.runsUrl, front.runsUrl.replace(/\/runs$/, '/batches')]) {
        const answered = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"agent": "notes", "input": ' });
        expect(answered.status, url).toBe(400);
        expect(await answered.json()).toEqual({ message: 'body: not valid JSON' });
      }
      // Valid JSON that names no agent is still asked to name one.
      const unnamed = await fetch(front.runsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input": {}}' });
      expect(unnamed.status).toBe(400);
      expect(await unnamed.json()).toEqual({ message: 'agent: this serve runs notes, triage: name one' });
    } finally {
      await front.close();
    }
  });

  it.each([
    ['a run id with a malformed escape', '/v1/runs/%ZZ', /^runId: malformed percent-encoding in the path: "%ZZ"$/],
    ["a run's events with a malformed run id", '/v1/runs/%E0%A4%A/events', /^runId: malformed percent-encoding/],
    ['a cancel with a malformed run id', '/v1/runs/%/cancel', /^runId: malformed percent-encoding/],
    ['a batch id with a malformed escape', '/v1/batches/%ZZ', /^batchId: malformed percent-encoding/],
    ['an approval id with a malformed escape', '/v1/approvals/%ZZ', /^approvalId: malformed percent-encoding/],
    // As each engine refuses them (400), not as an id no engine holds (404).
    ['a batch id with a slash', '/v1/batches/a%2Fb', /^invalid batchId: expected 1-40 letters, digits, "-" or "_"/],
    ['a batch id of 41 characters', `/v1/batches/${'x'.repeat(41)}`, /^invalid batchId: expected 1-40 letters/],
    ['a run id with a slash', '/v1/runs/a%2Fb', /^invalid runId: expected 1-80 letters, digits, "-" or "_"/],
    ["a run's events with a run id of 81 characters", `/v1/runs/${'r'.repeat(81)}/events`, /^invalid runId: expected 1-80 letters/],
    ['a target that is no URL', '//[', /^path: not a valid request target/],
  ])('refuses %s with 400 naming it, not a 500 with the exception, and asks no engine', async (_, path, message) => {
    const front = await startFrontDoor();
    // Engines nobody reaches: a request that got to one would fail (500), not be refused.
    const nowhere = (name: string) => ({ name, runs: `http://127.0.0.1:9/${name}/v1/runs`, approvals: `http://127.0.0.1:9/${name}/v1/approvals` });
    front.serve([nowhere('notes'), nowhere('triage')]);
    try {
      const answered = await fetch(`${front.runsUrl.replace(/\/v1\/runs$/, '')}${path}`, { method: path.endsWith('/cancel') ? 'POST' : 'GET' });
      expect(answered.status).toBe(400);
      expect(await answered.json()).toEqual({ message: expect.stringMatching(message) });
    } finally {
      await front.close();
    }
  });

  it.each([
    ['PUT', '/v1/runs', 'GET, POST'],
    ['POST', '/v1/approvals', 'GET'],
    ['GET', '/v1/batches', 'POST'],
    ['DELETE', '/v1/runs/r1', 'GET'],
    ['PUT', '/v1/runs/r1/cancel', 'POST'],
    ['POST', '/v1/runs/r1/events', 'GET'],
    ['DELETE', '/v1/approvals/apv_0123456789ab', 'GET, POST'],
    ['POST', '/v1/batches/b1', 'GET'],
  ])('refuses %s %s with 405 and the methods the route takes in Allow, as each engine does, and asks no engine', async (method, path, allow) => {
    const front = await startFrontDoor();
    // Engines nobody reaches: a request that got to one would fail (500), not be refused.
    const nowhere = (name: string) => ({ name, runs: `http://127.0.0.1:9/${name}/v1/runs`, approvals: `http://127.0.0.1:9/${name}/v1/approvals` });
    front.serve([nowhere('notes'), nowhere('triage')]);
    try {
      const answered = await fetch(`${front.runsUrl.replace(/\/v1\/runs$/, '')}${path}`, { method, ...(method !== 'GET' && { headers: { 'content-type': 'application/json' }, body: '{"agent": "notes", "input": {}}' }) });
      expect(answered.status).toBe(405);
      expect(answered.headers.get('allow')).toBe(allow);
      expect(await answered.json()).toEqual({ message: `${method} is not allowed on ${path}: it takes ${allow}` });
    } finally {
      await front.close();
    }
  });

  it('refuses a target that is no URL without the credential as any other (403): the console behind the port takes it as none of its paths', async () => {
    // The console serve puts behind its port (console/proxy.ts), at an address nobody reaches: it is never asked.
    const front = await startFrontDoor({ fallback: consoleProxy('http://127.0.0.1:9', () => front.port) });
    front.serve([{ name: 'notes', runs: 'http://127.0.0.1:9/notes/v1/runs', approvals: 'http://127.0.0.1:9/notes/v1/approvals' }]);
    try {
      const answered = await fetch(`http://127.0.0.1:${front.port}//[`);
      expect(answered.status).toBe(403);
      expect(await answered.json()).toEqual({ message: expect.stringMatching(/^credential: missing or wrong/) });
    } finally {
      await front.close();
    }
  });
});
