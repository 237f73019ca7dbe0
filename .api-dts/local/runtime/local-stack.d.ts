import { SFNClient } from '@aws-sdk/client-sfn';
import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { type CfnTemplateJson } from '../template/asl.js';
import { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind } from '../state/ledger-files.js';
import type { LocalStackOptions } from './options.js';
import { SfnQuotas } from '../aws/sfn-api-throttling.js';
export { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind };
export type { LocalStackOptions };
export type LocalStack<World extends DevWorld = DevWorld> = Awaited<ReturnType<typeof startLocalStack<World>>>;
export declare function startLocalStack<World extends DevWorld = DevWorld>(options: LocalStackOptions<World>): Promise<{
    agent: AgentDefinition<any, any, World>;
    engine: import("../engine/local-engine.js").LocalEngine;
    ledger: import("../../lambdas/ledger/ledger.js").Ledger | import("../../lambdas/ledger/storage-ledger.js").StorageLedger;
    sfn: SFNClient;
    world: World;
    model: import("../../sim/model-server.js").ModelServer;
    stateMachineArn: string;
    /** The twin's IAM (local/aws/iam): the roles, their credentials and the decisions so far; undefined with `iam: false`. */
    iam: import("../aws/iam/index.js").TwinIam | undefined;
    /** The API throttling (local/aws/sfn-api-throttling.ts) and what it refused; undefined unless `quotas: true`. */
    quotas: SfnQuotas | undefined;
    ledgerKind: LedgerKind;
    endpoints: {
        ledger: string;
        sfn: string;
        approvals: string;
        runs: string;
        approvalPage: string;
        model: string;
    } | {
        dynamodb: string;
        sfn: string;
        approvals: string;
        runs: string;
        approvalPage: string;
        model: string;
    };
    /** The fingerprint of the code this stack starts runs on, for a run's model (what StartRun binds a run to). */
    fingerprintOf: import("../../lambdas/runs/versions.js").CodeFingerprint;
    /**
     * The runs API's handler (`POST /runs`, served at `endpoints.runs` as this machine's user): a
     * test that plays several people invokes it with an event whose caller is one of them, as
     * API Gateway would after verifying that person's signature.
     */
    runsApi: import("@middy/core").MiddyfiedHandler<import("aws-lambda").APIGatewayProxyEvent, import("aws-lambda").APIGatewayProxyResult, Error, import("aws-lambda").Context, {}>;
    /** Signed links for a pending approval (what `savepoint approvals` prints). */
    approvalLinks: (approval: ApprovalRecord) => Promise<{
        approver: string;
        url: string;
    }[]>;
    /**
     * "Deploys" another version of the agent (local/aws/state-machine-versions.ts): its module's handlers on the
     * template's definition become the engine's newest version. New runs start on it, and the
     * event-driven steps (recovery, expiry, kill) run its code; live runs keep their version.
     */
    deploy: (next: AgentDefinition<any, any, World>, deployOptions?: {
        codeVersion?: string;
        template?: CfnTemplateJson;
    }) => number;
    /**
     * Runs the ExpireApprovals step now, as each approval's deadline timer does: what a test that
     * moves its clock past a deadline calls, instead of waiting for the real timer.
     */
    expireApprovals: () => Promise<{
        expired: string[];
    }>;
    /**
     * The version pruner (lambdas/steps/prune-versions.ts; every 6 hours on AWS), as its role,
     * through the Step Functions endpoint: deletes the versions nothing needs, keeping the newest `keep`.
     */
    pruneVersions: (prune?: {
        keep?: number;
        graceMs?: number;
    }) => Promise<import("../../lambdas/steps/prune-versions.js").PruneResult>;
    /** The watchdog: resumes this agent's runs left running by a process that died (local/runtime/watchdog.ts). */
    recoverOrphans: (sweep?: {
        except?: string;
        onDamaged?: (runId: string, error: Error) => void;
    }) => Promise<import("../../lambdas/steps/recover-run.js").RecoverResult[]>;
    close: () => Promise<void>;
}>;
