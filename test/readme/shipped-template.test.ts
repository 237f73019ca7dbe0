import { describe, expect, it } from 'vitest';
import { reidentified } from '../../lambdas/shared/definition-identity.js';
import { renamedTemplate, synthesizeTemplate, TEMPLATE_AGENT } from '../../local/template/synthesize.js';

/**
 * An installed savepoint without the CDK runs the template its build synthesized for
 * TEMPLATE_AGENT, renamed for the agent (local/template/synthesize.ts). That is only sound if the renamed
 * template is the one the CDK would synthesize for the agent: the same but for the content hashes
 * the CDK puts in the logical ids of function versions and API deployments.
 */
describe('the template the package ships', () => {
  it.each([{ traced: false }, { traced: true }])('renamed for an agent, is what the CDK synthesizes for that agent (up to content hashes in logical ids), traced: $traced', async (options) => {
    // StartRun's definition.hash is a hash of the rendered definition, whose Lambda version ids hold
    // content hashes: it differs with them (and is computed anew on renaming, tested below).
    const hashesOut = (text: string) =>
      text.replace(/(CurrentVersion|Deployment)([0-9A-F]{8})[0-9a-f]{32}/g, '$1$2').replace(/\\"hash\\":\\"[0-9a-f]{16}\\"/g, '\\"hash\\":\\"\\"');
    const shipped = JSON.stringify(renamedTemplate(JSON.stringify(await synthesizeTemplate(TEMPLATE_AGENT, options)), 'inbox-notes'));
    const direct = JSON.stringify(await synthesizeTemplate('inbox-notes', options));
    expect(shipped).not.toContain(TEMPLATE_AGENT);
    expect(hashesOut(shipped)).toBe(hashesOut(direct));
    // The hashes are all that differs: the comparison is not vacuous.
    expect(shipped).not.toBe(direct);
  });

  it('computes the identity of a renamed definition as the CDK computes it for its own', async () => {
    const template = await synthesizeTemplate('inbox-notes');
    const definition = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')!.Properties!['DefinitionString'];
    expect(JSON.stringify(definition)).toMatch(/\\"hash\\":\\"[0-9a-f]{16}\\"/);
    expect(reidentified(definition)).toEqual(definition);
    const tampered = JSON.parse(JSON.stringify(definition).replace(/\\"hash\\":\\"[0-9a-f]{16}\\"/, '\\"hash\\":\\"0000000000000000\\"'));
    expect(reidentified(tampered)).toEqual(definition);
  });
});
