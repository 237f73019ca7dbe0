import { CfnParameter, Stack, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DurableAgent, type DurableAgentProps } from './durable-agent.js';
import { LedgerTable } from './ledger-table.js';

export interface SavepointStackProps extends StackProps {
  /** Version string recorded in every run's fingerprint. @default 'dev' */
  readonly codeVersion?: string;
}

/**
 * A stack for savepoint agents: one ledger table they share, the model provider's URL and key as
 * deploy-time parameters (the same template serves every environment), and `addAgent` for each
 * agent deployed side by side.
 */
export class SavepointStack extends Stack {
  readonly ledger: LedgerTable;
  readonly #model: { apiUrl: string; apiKey: string };
  readonly #codeVersion: string;

  constructor(scope: Construct, id: string, props: SavepointStackProps = {}) {
    super(scope, id, props);
    this.ledger = new LedgerTable(this, 'Ledger');
    const modelApiUrl = new CfnParameter(this, 'ModelApiUrl', {
      type: 'String',
      description: 'Base URL of the messages API the agents call (POST {url}/v1/messages).',
      allowedPattern: '^https?://.+',
    });
    const modelApiKey = new CfnParameter(this, 'ModelApiKey', { type: 'String', noEcho: true, description: 'API key of the model provider.' });
    this.#model = { apiUrl: modelApiUrl.valueAsString, apiKey: modelApiKey.valueAsString };
    this.#codeVersion = props.codeVersion ?? 'dev';
  }

  /** Deploys an agent on the shared ledger and model. */
  addAgent(id: string, props: Omit<DurableAgentProps, 'model' | 'table' | 'codeVersion'> & Partial<Pick<DurableAgentProps, 'model'>>): DurableAgent {
    return new DurableAgent(this, id, { model: this.#model, table: this.ledger, codeVersion: this.#codeVersion, ...props });
  }

  /** A deploy-time parameter (e.g. an agent's provider URL). */
  parameter(id: string, description: string, allowedPattern?: string): string {
    return new CfnParameter(this, id, { type: 'String', description, ...(allowedPattern && { allowedPattern }) }).valueAsString;
  }
}
