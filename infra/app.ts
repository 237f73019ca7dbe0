import { App } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { SavepointStack } from './stack.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const app = new App();
new SavepointStack(app, 'Savepoint', {
  description: 'savepoint: durable agent runs on AWS Step Functions',
  codeVersion: pkg.version,
});
app.synth();
