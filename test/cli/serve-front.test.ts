import { describe, expect, it } from 'vitest';
import { startFrontDoor } from '../../cli/serve-front.js';

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
});
