/**
 * The identity of a state machine definition as deployed: a hash of its rendered
 * `DefinitionString` (the CloudFormation value, references unresolved) with StartRun's own
 * `definition.hash` field left empty. The state machine carries it in StartRun's payload
 * (infra/agent-state-machine.ts), so StartRun learns it without a Step Functions call.
 */
export declare function definitionIdentity(rendered: unknown): string;
/**
 * The rendered definition with its identity computed anew: for a template renamed after it was
 * synthesized (local/template/synthesize.ts), whose embedded hash is still the old definition's.
 */
export declare function reidentified(rendered: unknown): unknown;
