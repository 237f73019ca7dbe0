import { App } from 'aws-cdk-lib';
import { inProcessAppProps } from '../../local/template/synthesize.js';
import { scratchDir } from './scratch.js';

/**
 * An app for template assertions, synthesized in-process as the local engine's template is
 * (local/template/synthesize.ts). Its cloud assembly goes to a directory of its own in the test
 * run's directory (test/support/run-dir.ts), removed when the run ends: the CDK's default, a new
 * `cdk.out…` directory in the OS's temp made as the App is constructed, is never removed.
 */
export function assertionApp(): App {
  return new App({ ...inProcessAppProps(), outdir: scratchDir('cdk.out-') });
}
