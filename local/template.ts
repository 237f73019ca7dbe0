import { App } from 'aws-cdk-lib';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { SavepointStack } from '../infra/stack.js';

export type CfnTemplate = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/**
 * Synthesizes the CDK stack in-process, without bundling (the local engine calls the handlers'
 * source directly): the same definition `cdk deploy` ships.
 */
export function synthesizeTemplate(): CfnTemplate {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SavepointStack(app, 'Savepoint');
  return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
}

/** The ledger's CreateTable input, read from the template's table resource (keys and indexes alike). */
export function ledgerTableFromTemplate(template: CfnTemplate, tableName: string): CreateTableCommandInput {
  const tables = Object.entries(template.Resources).filter(
    ([, resource]) => resource.Type === 'AWS::DynamoDB::GlobalTable' || resource.Type === 'AWS::DynamoDB::Table',
  );
  if (tables.length !== 1) throw new Error(`expected one DynamoDB table in the template, found ${tables.length}`);
  const properties = tables[0]![1].Properties as Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes'>;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: properties.AttributeDefinitions,
    KeySchema: properties.KeySchema,
    GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
  };
}
