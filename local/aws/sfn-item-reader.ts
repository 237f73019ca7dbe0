/**
 * A distributed Map's ItemReader, as the twin runs it: the items of an S3 object that the Map reads
 * itself with `arn:aws:states:::s3:getObject`, a JSON array (`InputType: JSON`) or a CSV file
 * (`InputType: CSV`) — the two a batch's manifest may be (lambdas/runs/batch.ts). From "ItemReader
 * (Map)" (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html):
 *
 *   - `Resource` is the S3 integration; `Parameters` name the `Bucket` and `Key` (paths allowed);
 *     `ReaderConfig.InputType` says how to read the object; `MaxItems` (or `MaxItemsPath`) keeps
 *     the first items only, at most 100,000,000;
 *   - a JSON object's content must be an array, each element an item;
 *   - a CSV file's fields are named by its first row (`CSVHeaderLocation: FIRST_ROW`) or by
 *     `CSVHeaders` (`GIVEN`); each later row is an item, an object of those names to the row's
 *     values, as strings; `CSVDelimiter` is a comma unless named;
 *   - a read that fails (no such object, access denied, content that is not what InputType says)
 *     fails the Map state with `States.ItemReaderFailed`, which its Retry and Catch see.
 *
 * What the twin does not run, and refuses in a definition rather than run differently: the other
 * input types (JSONL, MANIFEST, Parquet, an S3 listing by `s3:listObjectsV2`), `VersionId` (the
 * local S3 keeps one version), JSONata `Arguments`. What it decides where the text we could read is
 * silent: a CSV row with more or fewer fields than the header fails the read (rather than being
 * padded or cut), and blank lines are skipped.
 *
 * How it runs: the interpreter has no ItemReader, so the engine's copy of the definition reads the
 * items in a Task of its own just before the Map (`withItemReaders`), bound in process to the
 * engine's S3 reader, kept out of the execution's history, and the Map takes its items from the
 * context object (`$$.ItemReader.<id>`), where that Task left them.
 */
import type { AslDefinition, AslState } from '../template/asl.js';
// The reading itself is the runs API's too (a manifest batch's progress): one place, lambdas/shared/item-reader.ts.
import { DELIMITERS, MAX_ITEMS, type ReaderConfig } from '../../lambdas/shared/item-reader.js';
export { ITEM_READER_FAILED, ItemReaderFailed, readItems, type ReaderConfig } from '../../lambdas/shared/item-reader.js';

const GET_OBJECT = /^arn:[^:]+:states:::s3:getObject$/;

/** A Map's ItemReader, where the twin keeps its items (`$$.ItemReader.<id>`) and the Task that reads them. */
export interface ItemReaderState {
  /** The Map it reads for. */
  map: string;
  /** Its key in the context object. */
  id: string;
  config: ReaderConfig;
}

/** What the twin would not run as AWS runs it, or what AWS refuses, in a Map's ItemReader. */
export function itemReaderProblems(reader: unknown): string[] {
  if (!reader || typeof reader !== 'object') return ['ItemReader (not an object)'];
  const { Resource, ReaderConfig, Parameters, Arguments } = reader as { Resource?: unknown; ReaderConfig?: Partial<ReaderConfig> & Record<string, unknown>; Parameters?: Record<string, unknown>; Arguments?: unknown };
  const problems: string[] = [];
  if (typeof Resource !== 'string' || !GET_OBJECT.test(Resource)) problems.push(`ItemReader.Resource ${String(Resource)} (the local engine reads S3 objects with arn:aws:states:::s3:getObject only)`);
  const type = ReaderConfig?.InputType;
  if (type !== 'JSON' && type !== 'CSV') problems.push(`ItemReader.ReaderConfig.InputType ${String(type)} (the local engine reads JSON and CSV only)`);
  if (type === 'CSV') {
    const location = ReaderConfig?.CSVHeaderLocation;
    if (location !== 'FIRST_ROW' && location !== 'GIVEN') problems.push(`ItemReader.ReaderConfig.CSVHeaderLocation ${String(location)} (AWS requires FIRST_ROW or GIVEN for a CSV)`);
    if (location === 'GIVEN' && !(Array.isArray(ReaderConfig?.CSVHeaders) && ReaderConfig.CSVHeaders.length > 0)) problems.push('ItemReader.ReaderConfig.CSVHeaders (GIVEN headers need a list)');
    if (ReaderConfig?.CSVDelimiter !== undefined && !(String(ReaderConfig.CSVDelimiter) in DELIMITERS)) problems.push(`ItemReader.ReaderConfig.CSVDelimiter ${String(ReaderConfig.CSVDelimiter)} (one of ${Object.keys(DELIMITERS).join(', ')})`);
  }
  const max = ReaderConfig?.MaxItems;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0 && max <= MAX_ITEMS)) problems.push(`ItemReader.ReaderConfig.MaxItems ${String(max)} (an integer from 0 to ${MAX_ITEMS})`);
  if (ReaderConfig?.MaxItemsPath !== undefined) problems.push('ItemReader.ReaderConfig.MaxItemsPath (not run by the local engine)');
  if (Arguments !== undefined) problems.push('ItemReader.Arguments (JSONata: the local engine runs JSONPath only)');
  const named = (field: string) => Parameters !== undefined && (field in Parameters || `${field}.$` in Parameters);
  if (!named('Bucket') || !named('Key')) problems.push('ItemReader.Parameters (a Bucket and a Key)');
  if (named('VersionId')) problems.push('ItemReader.Parameters.VersionId (the local S3 keeps one version of an object)');
  return problems;
}

/** The name of the Task that reads a Map's items in the engine's copy (kept out of its history). */
const readerStateName = (map: string) => `${map} ItemReader`;

/** The ItemReaders of a definition (any depth), by the name of the Task that reads each. */
export function itemReaderStates(definition: AslDefinition): Map<string, ItemReaderState> {
  const readers = new Map<string, ItemReaderState>();
  const visit = (scope: AslDefinition) => {
    for (const [name, state] of Object.entries(scope.States)) {
      if (state.Type === 'Map' && state['ItemReader'] !== undefined) readers.set(readerStateName(name), { map: name, id: `r${readers.size}`, config: (state['ItemReader'] as { ReaderConfig: ReaderConfig }).ReaderConfig });
      for (const branch of state.Branches ?? []) visit(branch);
      const processor = state.ItemProcessor ?? state.Iterator;
      if (processor) visit(processor);
    }
  };
  visit(definition);
  return readers;
}

/**
 * The copy the interpreter runs: before each Map with an ItemReader, a Task of the same scope that
 * reads its items (its Parameters, Retry and Catch the Map's own, so a path, a retry and a catch
 * of States.ItemReaderFailed behave as on the Map), every transition into the Map sent to it; the
 * Map reads its items from the context object instead.
 */
export function withItemReaders(definition: AslDefinition): AslDefinition {
  const readers = [...itemReaderStates(definition).entries()];
  if (readers.length === 0) return definition;
  const copy = structuredClone(definition);
  const rewrite = (scope: AslDefinition) => {
    for (const [name, state] of Object.entries(scope.States)) {
      for (const branch of state.Branches ?? []) rewrite(branch);
      const processor = state.ItemProcessor ?? state.Iterator;
      if (processor) rewrite(processor);
      const found = readers.find(([, reader]) => reader.map === name);
      if (!found || state['ItemReader'] === undefined) continue;
      const [readerName, reader] = found;
      const { Parameters } = state['ItemReader'] as { Parameters: Record<string, unknown> };
      const readerTask: AslState = { Type: 'Task', Resource: `arn:aws:states:::s3:getObject`, Parameters, ResultPath: null, Next: name };
      if (state['Retry'] !== undefined) readerTask['Retry'] = state['Retry'];
      if (state['Catch'] !== undefined) readerTask['Catch'] = state['Catch'];
      delete state['ItemReader'];
      state['ItemsPath'] = `$$.ItemReader.${reader.id}`;
      redirect(scope, name, readerName);
      scope.States[readerName] = readerTask;
    }
  };
  rewrite(copy);
  return copy;
}

/** Every transition of a scope into `from` goes to `to` instead. */
export function redirect(scope: AslDefinition, from: string, to: string): void {
  if (scope.StartAt === from) scope.StartAt = to;
  for (const state of Object.values(scope.States)) {
    if (state['Next'] === from) state['Next'] = to;
    if (state['Default'] === from) state['Default'] = to;
    for (const rule of [...((state['Choices'] as { Next?: string }[] | undefined) ?? []), ...((state['Catch'] as { Next?: string }[] | undefined) ?? [])]) if (rule.Next === from) rule.Next = to;
  }
}
