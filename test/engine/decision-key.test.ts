import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/ledger-client.js';
import { localApprovalKeys } from '../../local/state/approval-keys.js';
import { localUser } from '../../local/services/approval-api.js';
import { postDecision } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * The decision key (`keys/decisions.key` in a state directory) signs every decision; `verify`
 * checks each approved decision against it, as CallTool does before it sends: a key replaced after
 * a decision is named, not passed over.
 */
describe('verify and the decision key', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-decision-key-'));
  let harness: Harness;
  const runId = 'decided';
  const verify = () => createClient({ ledger: harness.stack.ledger, ledgerDecisions: { identity: { id: localUser(), via: 'cli' }, decisionMac: localApprovalKeys(stateDir).decisions } }).verify(runId);
  beforeAll(async () => {
    harness = await startHarness({ stateDir, onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve' }) });
    expect((await harness.run({ runId, input: sampleInput })).status).toBe('SUCCEEDED');
  }, 120_000);
  afterAll(async () => {
    await harness?.stack.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('passes with the key that signed the decisions', async () => {
    const [report] = (await verify())!;
    expect(report!.approvals).toBeGreaterThan(0);
    expect(report!.problems).toEqual([]);
  });

  it('fails, naming keys/decisions.key and each approval, once the key is replaced', async () => {
    const keyFile = join(stateDir, 'keys', 'decisions.key');
    const key = readFileSync(keyFile);
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    try {
      const [report] = (await verify())!;
      expect(report!.problems).toHaveLength(report!.approvals);
      for (const problem of report!.problems) expect(problem).toMatch(/#APPROVAL fails verification: the approval.s decision does not verify with the decision key \(keys\/decisions\.key\): the key was replaced/);
    } finally {
      // The signing key back: the other test verifies with it, whichever runs first.
      writeFileSync(keyFile, key, { mode: 0o600 });
    }
  });
});
