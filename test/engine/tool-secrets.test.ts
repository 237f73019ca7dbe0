import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool, type DevWorld, type ModelPolicy } from '../../lambdas/define.js';
import type { ToolResultBlock, ToolUseBlock } from '../../lambdas/records/messages.js';
import { Steps } from '../../lambdas/shared/steps.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { createTestEnvironment } from '../../testing/index.js';
import { identityPolicies } from '../support/role-policies.js';

/**
 * Issue 36 item 7: a tool credential is a secret only CallTool reads. A tool reads it with
 * `context.secret(name)`; on the twin the read is GetSecretValue as CallTool's role on the secret
 * the template's TOOL_SECRETS names (as infra/tool-secrets.ts binds it), and no other function's
 * role may read it.
 */

type Turn = ReturnType<ModelPolicy>;
const use = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({ type: 'tool_use', id, name, input });
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:chat-webhook-AbCdEf';
const WEBHOOK = 'https://hooks.example/T000/B000/very-secret';

function agentWith(seen: string[], results: ToolResultBlock[][]) {
  const post = defineTool({
    name: 'post_message',
    description: 'Posts a message to the team chat.',
    input: z.object({ text: z.string() }),
    effect: 'read',
    execute: async ({ text }, context) => {
      const url = await context.secret('CHAT_WEBHOOK_URL');
      seen.push(url);
      return { posted: text.length };
    },
  });
  return defineAgent({
    name: 'secret-tools',
    model: 'sim:savepoint-sim-1',
    system: 'Post.',
    input: z.object({ id: z.string() }),
    prompt: () => 'Post twice.',
    tools: [post],
    dev: {
      policy: (request): Turn => {
        const last = request.messages.at(-1)!;
        results.push(Array.isArray(last.content) ? last.content.filter((block): block is ToolResultBlock => block.type === 'tool_result') : []);
        const turn = request.messages.filter((message) => message.role === 'assistant').length;
        return turn === 0
          ? { content: [use('t1', 'post_message', { text: 'one' }), use('t2', 'post_message', { text: 'two' })], stop_reason: 'tool_use' }
          : { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
      },
    },
  });
}

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
/** The agent's template with its CallTool bound to the secret as infra binds `toolSecrets` (the environment's ARN, the role's read), or without the read. */
async function templateWith(options: { grant: boolean }): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('secret-tools')) as Template;
  const [, callTool] = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties!['Environment']?.Variables?.SAVEPOINT_STEP === Steps.CallTool)!;
  callTool.Properties!['Environment'].Variables.TOOL_SECRETS = JSON.stringify({ CHAT_WEBHOOK_URL: SECRET_ARN });
  if (options.grant) {
    const roleId = callTool.Properties!['Role']['Fn::GetAtt'][0] as string;
    identityPolicies(template.Resources as never).find((policy) => policy.roles.includes(roleId))!.document.Statement.push({ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], Resource: SECRET_ARN });
  }
  return template as unknown as CfnTemplateJson;
}

let harness: AgentHarness<DevWorld> | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await harness?.stack.close();
  harness = undefined;
});

describe('tool secrets on the twin', () => {
  it('serve a tool its credential through context.secret, read as CallTool once (kept), and refused to CallModel', async () => {
    const seen: string[] = [];
    harness = await startAgentHarness({ agent: agentWith(seen, []), template: await templateWith({ grant: true }), toolSecrets: { CHAT_WEBHOOK_URL: WEBHOOK } });
    const reads: string[] = [];
    harness.stack.iam!.authorizer.onDecision((caller, request, decision) => {
      if (request.resource === SECRET_ARN && 'role' in caller) reads.push(`${caller.session.replace(/[0-9A-F]{8}$/, '')}:${decision}`);
    });
    const finished = await harness.run({ runId: 'secret-run', input: { id: 'a' } });
    expect(finished.status).toBe('SUCCEEDED');
    expect(seen).toEqual([WEBHOOK, WEBHOOK]);
    // Two calls, one read: the value is kept for the TTL (lambdas/tools/secrets.ts).
    expect(reads).toEqual(['AgentCallToolFunction:Allowed']);
    // CallModel's role cannot read it (nor any function's but CallTool's).
    expect(() => harness!.stack.iam!.authorizeAs(Steps.CallModel, { action: 'secretsmanager:GetSecretValue', resource: SECRET_ARN })).toThrow(/AgentCallModelFunction\w+\/\w+ is not authorized to perform: secretsmanager:GetSecretValue/);
    // The value is in no function's environment, nor in the tool's recorded result.
    expect(JSON.stringify(harness.stack.iam!.servicesOf(Steps.CallTool))).not.toContain(WEBHOOK);
    const recorded = await harness.stack.ledger.getCall('secret-run', 1, 1);
    expect(recorded).toMatchObject({ name: 'post_message', outcome: 'ok' });
    expect(JSON.stringify(recorded)).not.toContain(WEBHOOK);
  });

  it("refuses the read when CallTool's role may not read the secret: the tool fails, answered to the model", async () => {
    const seen: string[] = [];
    const results: ToolResultBlock[][] = [];
    harness = await startAgentHarness({ agent: agentWith(seen, results), template: await templateWith({ grant: false }), toolSecrets: { CHAT_WEBHOOK_URL: WEBHOOK } });
    await harness.run({ runId: 'secret-refused', input: { id: 'a' } });
    expect(seen).toEqual([]);
    expect(results.flat().map((block) => String(block.content))).toEqual([0, 1].map(() => expect.stringMatching(/AgentCallToolFunction\w+ is not authorized to perform: secretsmanager:GetSecretValue/)));
    expect(harness.stack.iam!.authorizer.decisionsByAction()['secretsmanager:GetSecretValue']!.denied).toBeGreaterThan(0);
  });
});

describe('tool secrets in the testing kit', () => {
  it('serves a tool its credential from the toolSecrets option', async () => {
    const seen: string[] = [];
    const env = await createTestEnvironment({ agent: agentWith(seen, []), toolSecrets: { CHAT_WEBHOOK_URL: WEBHOOK } });
    try {
      expect((await env.run({ id: 'kit' })).status).toBe('succeeded');
      expect(seen).toEqual([WEBHOOK, WEBHOOK]);
    } finally {
      await env.close();
    }
  });
});
