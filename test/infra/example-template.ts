import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { exampleStack } from '../../infra/example.js';

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

/**
 * An app for template assertions: no asset bundling, and no CDK built-in CloudFormation validation
 * (its engine costs seconds of CPU per worker and most of every synthesis). test/infra/nag.test.ts
 * runs that validation on the example app, with its findings as errors.
 */
export function assertionApp(): App {
  return new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
}
