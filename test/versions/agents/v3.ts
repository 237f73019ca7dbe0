import { versionedAgent } from '../versioned-agent.js';

/** Version 3 of the versioned test agent, as a module the CLI loads (`--agent test/versions/agents/v3.ts`). */
export default versionedAgent({ version: '3', compatibleWith: ['1'], payments: [] });
