import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { exampleStack } from '../../infra/example.js';
import { inProcessAppProps } from '../../local/template/synthesize.js';

let synthesized: Record<string, unknown> | undefined;

/**
 * The example app's stack with its defaults, synthesized once per test worker (seconds of CPU each
 * time) for every infra file that asserts on it. Each call gets its own copy: no file can change
 * what another one sees.
 */
export function exampleTemplate(): Template {
  synthesized ??= Template.fromStack(exampleStack(assertionApp())).toJSON();
  return Template.fromJSON(structuredClone(synthesized));
}

/** An app for template assertions, synthesized in-process as the local engine's template is (local/template/synthesize.ts). */
export function assertionApp(): App {
  return new App(inProcessAppProps());
}
