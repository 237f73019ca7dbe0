import type { Clock } from '../lambdas/shared/ports.js';


/**
 * Simulated time for the fleet benchmark: a clock that moves only when every participant (each
 * live run, and the driver that starts them) is waiting on it. Work done by this process between
 * two waits — the engine, the steps, the ledger — takes no simulated time; a wait (a model call's
 * latency, a DynamoDB request's) takes exactly its simulated length, however long the CPU needed
 * to get there. So 1,000 runs of ~2 s model calls cost simulated seconds, not the minutes two cores
 * need to execute 100,000 steps, and the quotas (token buckets on this clock) see the rates the
 * fleet would make on AWS.
 *
 * What is not simulated takes no simulated time: Lambda's own start and invoke latency, a state
 * transition's, a tool call's (the payments provider answers in process), and the engine's retry
 * waits, which are real milliseconds (the stack's `retryDelayMs`).
 *
 * @example
 * const sim = new SimulatedTime(Date.parse('2026-12-01T02:00:00Z'));
 * sim.join();            // a participant
 * await sim.sleep(1500); // resumes when every participant waits and 1.5 simulated seconds passed
 * sim.leave();
 */
export class SimulatedTime implements Clock {
  #now: number;
  #participants = 0;
  /** The waits by wake-up time (on the grid), and those times in a min-heap: the next one is found in O(log n). */
  #due = new Map<number, { wake: () => void; who: string | undefined }[]>();
  #times = new MinHeap();
  #waiting = 0;
  /** Waits per owner, and waits of no known owner: who sleeps is counted as waits come and go, not by a scan per turn. */
  #owners = new Map<string, number>();
  #anonymous = 0;
  /** Which participant is running (an AsyncLocalStorage of the caller's): one participant may wait in several places at once (a batch of ledger reads). */
  readonly #who: () => string | undefined;
  #timer: NodeJS.Immediate | undefined;
  /** Times the clock moved. */
  advances = 0;

  /**
   * @param quantumMs the grid wake-ups are rounded up to: a wait is up to this much longer than
   *   asked, never shorter @default 10
   * @param who the participant a wait belongs to @default each wait its own
   */
  constructor(
    startMs: number,
    readonly quantumMs = 10,
    who: () => string | undefined = () => undefined,
  ) {
    this.#now = startMs;
    this.#who = who;
  }

  now(): Date {
    return new Date(this.#now);
  }

  nowMs(): number {
    return this.#now;
  }

  join(): void {
    this.#participants += 1;
  }

  leave(): void {
    this.#participants -= 1;
    this.#poll();
  }

  /** Resolves once `ms` simulated milliseconds have passed (0 or less: at once). */
  sleep(ms: number): Promise<void> {
    if (!(ms > 0)) return Promise.resolve();
    return new Promise((wake) => {
      // Wake-ups fall on a grid (rounded up): runs due in the same quantum wake together, so the
      // clock moves once for them all (each move waits for the process to go idle).
      const at = Math.ceil((this.#now + ms) / this.quantumMs) * this.quantumMs;
      const who = this.#who();
      let bucket = this.#due.get(at);
      if (!bucket) {
        this.#due.set(at, (bucket = []));
        this.#times.push(at);
      }
      bucket.push({ wake, who });
      this.#waiting += 1;
      if (who === undefined) this.#anonymous += 1;
      else this.#owners.set(who, (this.#owners.get(who) ?? 0) + 1);
      this.#poll();
    });
  }

  /** Participants waiting: the distinct owners of the waits (a wait of no known owner counts as one). */
  #asleep(): number {
    return this.#owners.size + this.#anonymous;
  }

  /**
   * Checks, on the next turn of the event loop, whether everyone waits: then the clock jumps to the
   * earliest wake-up and wakes everyone due. Checked again on each turn until it moves, so work
   * still in flight (promise chains, real timers) finishes first.
   */
  #poll(): void {
    if (this.#timer) return;
    this.#timer = setImmediate(() => {
      this.#timer = undefined;
      if (this.#waiting === 0) return;
      if (this.#asleep() < this.#participants) {
        this.#poll();
        return;
      }
      const at = this.#times.pop()!;
      this.#now = Math.max(this.#now, at);
      this.advances += 1;
      const due = this.#due.get(at)!;
      this.#due.delete(at);
      this.#waiting -= due.length;
      for (const { who } of due) {
        if (who === undefined) this.#anonymous -= 1;
        else if (this.#owners.get(who) === 1) this.#owners.delete(who);
        else this.#owners.set(who, this.#owners.get(who)! - 1);
      }
      for (const waiter of due) waiter.wake();
      if (this.#waiting > 0) this.#poll();
    });
  }
}

/** A binary min-heap of numbers (the simulated clock's wake-up times). */
class MinHeap {
  readonly #items: number[] = [];

  push(value: number): void {
    const items = this.#items;
    items.push(value);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= items[i]!) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && items[left]! < items[smallest]!) smallest = left;
        if (right < items.length && items[right]! < items[smallest]!) smallest = right;
        if (smallest === i) break;
        [items[smallest], items[i]] = [items[i]!, items[smallest]!];
        i = smallest;
      }
    }
    return top;
  }
}

/**
 * A log-normal latency in milliseconds, as service latencies are distributed: `median`, and `p95`
 * above it (σ = ln(p95 / median) / 1.645), capped at `max`.
 */
export function logNormal(random: () => number, latency: { median: number; p95: number; max: number }): () => number {
  const sigma = Math.log(latency.p95 / latency.median) / 1.645;
  return () => {
    // Box–Muller: a standard normal from two uniforms.
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.min(latency.max, latency.median * Math.exp(sigma * z));
  };
}
