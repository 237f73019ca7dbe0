/**
 * The items of an S3 object as a Distributed Map's ItemReader reads them, a JSON array
 * (`InputType: JSON`) or a CSV file (`InputType: CSV`), from "ItemReader (Map)"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html): one place
 * for the twin's ItemReader (local/aws/sfn-item-reader.ts, which says what it decides where AWS's
 * text is silent) and the runs API, which lists a manifest batch's runs by reading its manifest
 * the same way (lambdas/runs/batch.ts).
 */
/** The error a failed read fails the Map with (States Language's error name). */
export const ITEM_READER_FAILED = 'States.ItemReaderFailed';
/** MaxItems' ceiling, from the ItemReader page. */
export const MAX_ITEMS = 100_000_000;
export const DELIMITERS: Record<string, string> = { COMMA: ',', PIPE: '|', SEMICOLON: ';', SPACE: ' ', TAB: '\t' };

export interface ReaderConfig {
  InputType: 'JSON' | 'CSV';
  CSVHeaderLocation?: 'FIRST_ROW' | 'GIVEN';
  CSVHeaders?: string[];
  CSVDelimiter?: string;
  MaxItems?: number;
  MaxItemsPath?: string;
}

/** An ItemReader failure: the Map state fails with States.ItemReaderFailed and this cause. */
export class ItemReaderFailed extends Error {
  constructor(cause: string) {
    super(cause);
    this.name = ITEM_READER_FAILED;
  }
}

/** The items of an object's text, as the reader's configuration reads them; throws ItemReaderFailed as AWS fails the Map. */
export function readItems(text: string, config: ReaderConfig, where: string): unknown[] {
  const items = config.InputType === 'JSON' ? jsonItems(text, where) : csvItems(text, config, where);
  return config.MaxItems === undefined || config.MaxItems === 0 ? items : items.slice(0, config.MaxItems);
}

function jsonItems(text: string, where: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ItemReaderFailed(`${where} is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ItemReaderFailed(`${where} holds no JSON array (InputType JSON reads an array's elements)`);
  return parsed;
}

function csvItems(text: string, config: ReaderConfig, where: string): Record<string, string>[] {
  const rows = csvRows(text, DELIMITERS[config.CSVDelimiter ?? 'COMMA']!, where);
  const headers = config.CSVHeaderLocation === 'GIVEN' ? config.CSVHeaders! : rows.shift();
  if (!headers || headers.length === 0) throw new ItemReaderFailed(`${where} has no header row (CSVHeaderLocation FIRST_ROW)`);
  return rows.map((row, index) => {
    if (row.length !== headers.length) throw new ItemReaderFailed(`${where}: row ${index + 1} has ${row.length} fields, the header ${headers.length}`);
    return Object.fromEntries(headers.map((name, column) => [name, row[column]!]));
  });
}

/** RFC 4180 rows: a quoted field may hold the delimiter, line breaks and doubled quotes; blank lines are skipped. */
function csvRows(text: string, delimiter: string, where: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRow = () => {
    row.push(field);
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
      else if (c === '"') (quoted = false), i++;
      else (field += c), i++;
      continue;
    }
    if (c === '"' && field === '') (quoted = true), i++;
    else if (c === delimiter) row.push(field), (field = ''), i++;
    else if (c === '\r' && text[i + 1] === '\n') endRow(), (i += 2);
    else if (c === '\n' || c === '\r') endRow(), i++;
    else (field += c), i++;
  }
  if (quoted) throw new ItemReaderFailed(`${where}: a quoted field is not closed`);
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
