import * as z from 'zod';
import { defaultRunId, stableJson, type AgentDefinition } from '../define.js';
import { RunConfig, type ChildWait, type RunRecord } from '../records/ledger-records.js';
import { formatModelSpec, parseModelSpec } from '../models/spec.js';
import { InvalidInputError } from '../shared/errors.js';
import { DYNAMODB_ITEM_MAX_BYTES, PAYLOAD_LIMIT_BYTES } from '../shared/limits.js';
import { parseOrThrow } from '../shared/validation.js';
import { ForkRequest } from './fork.js';
import { RUN_ID_PATTERN, RUN_ID_RULE } from './run-id.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * What asks for a run: a run request (`savepoint run`, `StartExecution`, the client) or the
 * nightly scheduled event, parsed into the one shape StartRun acts on. ExecutionStopped and
 * RecoverRun read the same shape back from an execution's input (runs/status-change.ts).
 */

/** Why a run (or every run) was killed: recorded in the sealed ledger, so bounded like an approval's reason. */
export const KillReason = schemaOnFirstUse(() => z.string().max(500, 'at most 500 characters'));

export const RunId = schemaOnFirstUse(() => z.string().regex(RUN_ID_PATTERN, RUN_ID_RULE));

/** A run started by a person or a script (`savepoint run`, `StartExecution`, the client). */
export const RunRequest = schemaOnFirstUse(() =>
  z
    .object({
      runId: RunId().optional(),
      /** The agent's input, validated by the agent's own `input` schema. */
      input: z.unknown(),
      config: RunConfig().partial().strict().optional(),
      /** The model of this run (`provider:model-id`), instead of the stack's or the agent's. */
      model: z.string().min(1).optional(),
      /** Resume even though the code changed since the run started (the operator's `--force`). */
      force: z.boolean().optional(),
      /**
       * Who started the run, as the runs API signed it (runs/starter.ts): recorded only when
       * `startedByMac` verifies, never on this field's word (separation of duties: the starter may
       * not approve the run's requests).
       */
      startedBy: z.string().min(1).max(200).optional(),
      startedByMac: z.string().min(1).max(200).optional(),
      /**
       * `savepoint migrate`: move this live run to the code that runs this StartRun, which must be
       * agent version `to` and declare the run's version compatible (runs/versions.ts).
       */
      migrate: z.object({ to: z.string().min(1).max(64), by: z.string().min(1).max(200) }).strict().optional(),
      /** `savepoint fork`: start this run as a fork of another one (runs/fork.ts). */
      fork: ForkRequest().optional(),
      /**
       * A child run (`defineAgentTool`): the parent's tool call it answers. Its end wakes that call's
       * wait. Taken on the input's word: a false claim can only wake a wait early, and the woken
       * CallTool reads the child it derives itself (`childRunId`), never this one, and waits again.
       */
      parent: z.object({ runId: RunId(), turn: z.number().int().positive(), call: z.number().int().positive() }).strict().optional(),
    })
    .strict(),
);
export type RunRequest = z.infer<ReturnType<typeof RunRequest>>;

/** The EventBridge scheduled event (events/scheduled-event.json) that starts the nightly run. */
export const ScheduledEvent = schemaOnFirstUse(() =>
  z.object({
    'detail-type': z.literal('Scheduled Event'),
    source: z.literal('aws.events'),
    time: z.iso.datetime({ offset: true }),
  }),
);

export interface StartRequest {
  runId: string;
  input: unknown;
  config: Partial<RunConfig>;
  /** Normalized `provider:model-id`, when the request names one. */
  model?: string;
  force?: boolean;
  /** Only the schedule's: a run request's starter is proven by its MAC (runs/starter.ts), read by StartRun. */
  startedBy?: string;
  migrate?: { to: string; by: string };
  fork?: ForkRequest;
  parent?: ChildWait;
}

/**
 * The run an event asks for. A scheduled event becomes the input the agent derives from its time
 * (e.g. the day before), under the run id of that input: a second delivery of the same event
 * (EventBridge delivers at least once) resumes or joins the same run instead of starting another.
 */
/**
 * Only the settings a request names, as its schema parsed them: the partial schema fills in every
 * default, which would override the agent's own budgets.
 */
export function namedConfig(raw: unknown, parsed: Partial<RunConfig> | undefined): Partial<RunConfig> {
  const named = Object.keys((raw as { config?: object } | null)?.config ?? {});
  return Object.fromEntries(Object.entries(parsed ?? {}).filter(([key]) => named.includes(key))) as Partial<RunConfig>;
}

export function runRequestFromEvent(agent: AgentDefinition, event: unknown): StartRequest {
  if (typeof event === 'object' && event !== null && 'detail-type' in event) {
    const scheduled = parseOrThrow(ScheduledEvent(), event, 'scheduled event');
    if (!agent.scheduled) throw new InvalidInputError(`scheduled event: agent ${agent.name} does not run on a schedule (it defines no \`scheduled\`)`);
    const input = parseOrThrow(agent.input, agent.scheduled(new Date(scheduled.time)), `input of agent ${agent.name} for the scheduled event`);
    return { runId: runIdOf(agent, input), input, config: {}, startedBy: `schedule:${scheduled.source}` };
  }
  const request = parseOrThrow(RunRequest(), event, 'run input');
  const input = parseOrThrow(agent.input, request.input, `input of agent ${agent.name}`);
  const config = namedConfig(event, request.config);
  const model = request.model === undefined ? undefined : modelSpecOf(request.model, 'model');
  return {
    runId: request.runId ?? runIdOf(agent, input),
    input,
    config,
    force: request.force,
    ...(model && { model }),
    ...(request.migrate && { migrate: request.migrate }),
    ...(request.fork && { fork: request.fork }),
    ...(request.parent && { parent: request.parent }),
  };
}

/**
 * The run id an execution's input names itself (a run request with `runId`: the runs API's, the
 * CLI's, a child's, a recovery's, a hand-off's), read without the agent's code; none for the
 * schedule's event or a request that leaves the id to the agent's rule.
 */
export function namedRunId(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null || 'detail-type' in event) return undefined;
  const runId = RunId().safeParse((event as { runId?: unknown }).runId);
  return runId.success ? runId.data : undefined;
}

/** The run id of an input: the agent's own rule, or its name and a hash of the input. */
export function runIdOf(agent: AgentDefinition, input: unknown): string {
  return parseOrThrow(RunId(), agent.runId?.(input) ?? defaultRunId(agent, input), `run id of agent ${agent.name}`);
}

/**
 * Why a start under the run id of `existing` is not that run's request again: another input, or
 * another model named (its conversation so far was with the first model, and its dollars were
 * priced for it). Undefined when it is the same request: a start again answers, or resumes, the run.
 * One rule for StartRun and the runs API's idempotent start.
 */
export function otherRequestProblem(existing: Pick<RunRecord, 'runId' | 'input' | 'model'>, request: { input: unknown; model?: string | undefined }): InvalidInputError | undefined {
  if (stableJson(existing.input) !== stableJson(request.input)) {
    return new InvalidInputError(`runId: run ${existing.runId} was started with the input ${stableJson(existing.input)}, not ${stableJson(request.input)}`);
  }
  if (request.model !== undefined && request.model !== existing.model) {
    return new InvalidInputError(`model: run ${existing.runId} runs on ${existing.model}, not ${request.model}: start a new run id to use another model`);
  }
  return undefined;
}

/** A request refused for its size (413): nothing started. */
export class RequestTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestTooLarge';
  }
}

/**
 * Why a run request whose execution input (`input`, as StartExecution would be sent it) cannot
 * start: over Step Functions' limit, which StartExecution answers with InvalidExecutionInput (the
 * runs API answered that as its own 500). Undefined when it fits. `field` names what the caller gave.
 */
export function executionInputTooLarge(input: string, field: string): string | undefined {
  const size = Buffer.byteLength(input, 'utf8');
  if (size <= PAYLOAD_LIMIT_BYTES) return undefined;
  return `${field}: the run request is ${size} bytes as its execution's input, over Step Functions' ${PAYLOAD_LIMIT_BYTES}: pass what is large by reference (an S3 key, a URL) for a tool to read`;
}

/**
 * What a run record keeps free for what it gains while the run goes on (the executions that drove
 * it, its counters, a kill or an error, the budget extensions granted): a record written near the
 * item limit at the start would fail a later write mid-run. The sample day's 105-step run's
 * record grows by 1,078 bytes; each execution that takes a run over adds its ARN (~120 bytes).
 */
const RUN_RECORD_HEADROOM_BYTES = 64 * 1024;

/**
 * Why a run cannot be recorded: its record keeps the input, the prompt the agent makes of it and
 * the shape of its requests, in one DynamoDB item of at most 400 KB (a write over it is refused
 * with a ValidationException, which reached the caller as that). Undefined when they fit.
 */
export function runRecordTooLarge(parts: { input: unknown; prompt: string; requestShape: unknown }, field: string): string | undefined {
  const size = Buffer.byteLength(JSON.stringify(parts), 'utf8');
  const room = DYNAMODB_ITEM_MAX_BYTES - RUN_RECORD_HEADROOM_BYTES;
  if (size <= room) return undefined;
  return `${field}: the run's record would hold ${size} bytes of its input and the prompt the agent makes of it, over the ${room} a run record has for them (DynamoDB's 400 KB item, less what it gains as the run goes on): pass what is large by reference (an S3 key, a URL) for a tool to read`;
}

/**
 * runRecordTooLarge of a run of `agent` on `input` before it starts (the request's shape aside: the
 * agent alone makes it). A prompt that throws is left to StartRun, which says where in the agent's
 * code it threw.
 */
export function newRunTooLarge(agent: Pick<AgentDefinition, 'prompt'>, input: unknown, field: string): string | undefined {
  let prompt: string;
  try {
    prompt = agent.prompt(input);
  } catch {
    return undefined;
  }
  return runRecordTooLarge({ input, prompt, requestShape: undefined }, field);
}

/** `spec` normalized, or an error naming the field it came from. */
export function modelSpecOf(spec: string, field: string): string {
  try {
    return formatModelSpec(parseModelSpec(spec));
  } catch (error) {
    throw new InvalidInputError(`${field}: ${(error as Error).message}`, { cause: error });
  }
}
