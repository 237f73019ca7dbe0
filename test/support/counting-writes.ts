import type { Ledger } from '../../lambdas/ledger/ledger.js';

/** DynamoDB's throttling, as the SDK throws it: what a write that fails after its run's end meets. */
const throttled = () => Object.assign(new Error('Throughput exceeds the current capacity of your table (injected)'), { name: 'ProvisionedThroughputExceededException' });

/**
 * The ledger's writes that must happen once however often an event is delivered, counted per key
 * from outside the ledger (`decorateLedger` of a stack, or a handler's ledger): an approval decided
 * (`decideApproval` answering decided), a run's end written (`finishRun` answering the ended run), a
 * fleet lease given back with something in it (`returnFleetLease` answering more than nothing: a
 * lease with nothing unused gives nothing back, so check its day's counters, `getFleetDay`), a
 * recovery recorded. `of(write, key)`: how many times, `key` the run id (the approval id for
 * `decideApproval`).
 *
 * With `failFirstLeaseReturnOf`, that run's first lease return fails (DynamoDB throttled it): the
 * delivery that made it fails after the run's end was written. With `failRunEnds`, a run's failure
 * is refused so while it answers true.
 */
export function countingWrites(options: { failFirstLeaseReturnOf?: string; failRunEnds?: () => boolean } = {}) {
  let failing = options.failFirstLeaseReturnOf;
  const counts = new Map<string, number>();
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const decorate = <L extends Ledger>(ledger: L): L =>
    new Proxy(ledger, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'decideApproval') {
          return async (...args: Parameters<Ledger['decideApproval']>) => {
            const answer = await target.decideApproval(...args);
            if (answer.decided) count(`decideApproval ${answer.record.approvalId}`);
            return answer;
          };
        }
        if (property === 'finishRun') {
          return async (...args: Parameters<Ledger['finishRun']>) => {
            if (args[1].status === 'failed' && options.failRunEnds?.()) throw throttled();
            const finished = await target.finishRun(...args);
            if (finished) count(`finishRun ${args[0]}`);
            return finished;
          };
        }
        if (property === 'returnFleetLease') {
          return async (...args: Parameters<Ledger['returnFleetLease']>) => {
            if (failing === args[0]) {
              failing = undefined;
              throw throttled();
            }
            const given = await target.returnFleetLease(...args);
            if (given > 0) count(`returnFleetLease ${args[0]}`);
            return given;
          };
        }
        if (property === 'recordRecovery') {
          return async (...args: Parameters<Ledger['recordRecovery']>) => {
            const recorded = await target.recordRecovery(...args);
            if (recorded) count(`recordRecovery ${args[0]}`);
            return recorded;
          };
        }
        return value;
      },
    });
  return { decorate, of: (write: string, key: string) => counts.get(`${write} ${key}`) ?? 0 };
}
