import { describe, expect, it } from 'vitest';
import { synthesizeTemplate, TEMPLATE_AGENT } from '../../local/template.js';

/**
 * An installed savepoint without the CDK runs the template its build synthesized for
 * TEMPLATE_AGENT, renamed for the agent (local/template.ts). That is only sound if the renamed
 * template is the one the CDK would synthesize for the agent: the same but for the content hashes
 * the CDK puts in the logical ids of function versions and API deployments.
 */
describe('the template the package ships', () => {
  it('renamed for an agent, is what the CDK synthesizes for that agent (up to content hashes in logical ids)', async () => {
    const hashesOut = (text: string) => text.replace(/(CurrentVersion|Deployment)([0-9A-F]{8})[0-9a-f]{32}/g, '$1$2');
    const shipped = JSON.stringify(await synthesizeTemplate(TEMPLATE_AGENT)).replaceAll(TEMPLATE_AGENT, 'inbox-notes');
    const direct = JSON.stringify(await synthesizeTemplate('inbox-notes'));
    expect(shipped).not.toContain(TEMPLATE_AGENT);
    expect(hashesOut(shipped)).toBe(hashesOut(direct));
    // The hashes are all that differs: the comparison is not vacuous.
    expect(shipped).not.toBe(direct);
  });
});
