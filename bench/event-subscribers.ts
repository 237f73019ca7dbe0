/**
 * The subscribers of the run event benchmark (bench/events.ts), in a process of their own so that
 * the engine's CPU is measured without theirs: on `{ follow }` it opens that many
 * `followEvents` streams of the run at once and answers, once each has its `run.finished`, with the
 * delay from each event's record's write (`recordedAt`) to its delivery here.
 */
import { followEvents } from '../client/events.js';

interface Follow {
  follow: { url: string; credential: string; runId: string; subscribers: number };
}

process.on('message', (message: Follow) => {
  const { url, credential, runId, subscribers } = message.follow;
  void Promise.all(
    Array.from({ length: subscribers }, async () => {
      const delays: number[] = [];
      let events = 0;
      for await (const event of followEvents({ url, credential }, runId, { retryMs: 10 })) {
        const at = Date.now();
        events += 1;
        const recordedAt = typeof event.data['recordedAt'] === 'string' ? Date.parse(event.data['recordedAt']) : NaN;
        if (Number.isFinite(recordedAt)) delays.push(at - recordedAt);
      }
      return { delays, events };
    }),
  ).then(
    (followers) => process.send?.({ done: { delays: followers.flatMap((follower) => follower.delays), events: followers.map((follower) => follower.events) } }),
    (error: unknown) => process.send?.({ failed: String(error) }),
  );
});
process.send?.({ ready: true });
