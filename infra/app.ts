import { App } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { exampleStack } from './example.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const app = new App();
exampleStack(app, { codeVersion: pkg.version });
app.synth();
