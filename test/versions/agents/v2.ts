import { versionedAgent } from '../versioned-agent.js';

/** Version 2 of the versioned test agent, as a module the CLI loads (`--agent test/versions/agents/v2.ts`). */
export default versionedAgent({ version: '2', payments: [] });
