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
