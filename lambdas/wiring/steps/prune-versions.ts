import { createPruneVersions } from '../../steps/prune-versions.js';
import { type StepWiring } from './context.js';

export const wirePruneVersions: StepWiring = ({ deps }) => {
  if (!deps.versions) throw new Error("the version pruner needs the state machine's versions (HarnessDeps.versions)");
  const prune = createPruneVersions({ versions: deps.versions, clock: deps.clock, ...(deps.keepVersions !== undefined && { keep: deps.keepVersions }) });
  return () => prune();
};
