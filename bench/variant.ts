import { walkStates, type AslDefinition, type CfnTemplateJson } from '../local/template/asl.js';

/**
 * BENCHMARK VARIANT — not what savepoint deploys. The synthesized template with every `Retry`
 * field removed from the state machine definition: a failed step fails the execution (through the
 * Catch into RecordFailure), so the benchmark's restart-from-scratch baseline runs the same
 * handlers, ledger and engine as the real definition, minus the retries.
 */
export function withoutRetries(template: CfnTemplateJson): CfnTemplateJson {
  const copy = structuredClone(template) as CfnTemplateJson;
  const machines = Object.values(copy.Resources ?? {}).filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine');
  if (machines.length !== 1) throw new Error(`expected one state machine in the template, found ${machines.length}`);
  const join = machines[0]!.Properties!['DefinitionString'] as { 'Fn::Join': [string, unknown[]] };
  // The definition is a Fn::Join of JSON text and intrinsics (function ARNs): stand each intrinsic
  // in for a placeholder, edit the JSON, and put them back.
  const parts = join['Fn::Join'][1];
  const tokens = parts.filter((part) => typeof part !== 'string');
  const text = parts.map((part) => (typeof part === 'string' ? part : `@@${tokens.indexOf(part)}@@`)).join('');
  const definition = JSON.parse(text) as AslDefinition;
  let removed = 0;
  // Every state's, those of the tool calls' Map iterations included.
  walkStates(definition, (_name, state) => {
    if (state['Retry'] === undefined) return;
    delete state['Retry'];
    removed += 1;
  });
  if (removed === 0) throw new Error('the definition has no Retry field to remove');
  join['Fn::Join'][1] = JSON.stringify(definition)
    .split(/(@@\d+@@)/)
    .filter((piece) => piece !== '')
    .map((piece) => (/^@@\d+@@$/.test(piece) ? tokens[Number(piece.slice(2, -2))] : piece));
  return copy;
}
