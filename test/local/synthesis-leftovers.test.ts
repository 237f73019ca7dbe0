import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { synthesizeBatchTemplate } from '../../local/template/batch-synth.js';
import { inProcessAppProps, synthesizeTemplate } from '../../local/template/synthesize.js';

/**
 * The local engine synthesizes its stack in-process (an agent with its own toolTimeout, approvers or
 * child agents, and every batch): each synthesis writes a cloud assembly, which the CDK puts in a new
 * directory under the OS's temp and never removes. The engine's are removed once read.
 */
const temp = process.env.TMPDIR;
afterEach(() => {
  if (temp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = temp;
});

describe("the local engine's synthesis", { timeout: 60_000 }, () => {
  it("leaves a cloud assembly behind when the app is the CDK's default (what the engine's synthesis must not do)", () => {
    const app = new App(inProcessAppProps());
    new Stack(app, 'Plain');
    app.synth();
    expect(readdirSync(app.outdir)).toContain('Plain.template.json');
    rmSync(app.outdir, { recursive: true, force: true });
  });

  it("leaves nothing in the OS's temp directory: an agent's stack and the batch state machine", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-synth-check-'));
    try {
      process.env.TMPDIR = dir;
      // A name of its own: synthesized here, not taken from the process's cache of templates.
      const template = await synthesizeTemplate(`leftovers-${process.pid}-${Date.now()}`, { toolTimeoutMs: 45_000 });
      expect(Object.keys(template.Resources).length).toBeGreaterThan(10);
      expect(Object.keys(synthesizeBatchTemplate().Resources ?? {}).length).toBeGreaterThan(0);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(dir)).toBe(false);
  });
});
