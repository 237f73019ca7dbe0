import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { LedgerIndexes } from '../lambdas/ledger/dynamodb-ledger.js';

/**
 * The ledger: one on-demand table with point-in-time recovery and a TTL attribute, plus the two
 * sparse indexes approvals need (by opaque id, and pending by deadline).
 */
export class LedgerTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAt',
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      globalSecondaryIndexes: [
        { indexName: LedgerIndexes.byApprovalId, partitionKey: { name: 'approvalId', type: AttributeType.STRING } },
        {
          indexName: LedgerIndexes.pendingApprovals,
          partitionKey: { name: 'pendingApproval', type: AttributeType.STRING },
          sortKey: { name: 'decideBy', type: AttributeType.STRING },
        },
      ],
    });
  }

  /** Grants `fn` read/write on the ledger and tells it where the ledger is, in one call. */
  grantTo(fn: IFunction): void {
    this.table.grantReadWriteData(fn);
    if (fn instanceof LambdaFunction) fn.addEnvironment('TABLE_NAME', this.table.tableName);
  }
}
