import { versionedAgent } from '../versioned-agent.js';

/** Version 1 of the versioned test agent, as a module the CLI loads (`--agent test/versions/agents/v1.ts`). */
export default versionedAgent({ version: '1', payments: [] });
