import { createInterface, type Interface } from 'node:readline';

/** Questions asked at the terminal, answered one at a time, in order. */
export interface TerminalQuestions {
  /**
   * Writes `prompt` once the questions before it are answered, and resolves to the next line read;
   * to `undefined` when the input has ended (Ctrl-D, a pipe that ran dry), which answers no question.
   * Rejects with `withdrawn`'s reason when it is aborted first (the answer is no longer needed).
   */
  ask(prompt: string, withdrawn: AbortSignal): Promise<string | undefined>;
  /** Stops reading the input: the command has ended. */
  close(): void;
}

/**
 * One reader of `input` for every question a command asks, opened at the first:
 * - one for all: a reader per question reads ahead of its line, and what was typed or piped for
 *   the next questions went with it when it closed (`printf 'y\nn\n' | savepoint run --approve
 *   prompt` answered the first approval, and the second waited for its deadline);
 * - line by line as the terminal gives them (readline's `terminal: false`): the terminal stays in
 *   its own mode, where it echoes, edits the line and sends Ctrl-C as SIGINT, which stops the
 *   command as it does at any other time (readline's raw mode read Ctrl-C as a keystroke, which
 *   rejected the question and left the command running).
 */
export function terminalQuestions(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): TerminalQuestions {
  let reader: Interface | undefined;
  const lines: string[] = [];
  let ended = false;
  let arrived: (() => void) | undefined;
  const open = () => {
    if (reader) return;
    reader = createInterface({ input, terminal: false });
    reader.on('line', (line) => {
      lines.push(line);
      arrived?.();
    });
    reader.on('close', () => {
      ended = true;
      arrived?.();
    });
  };
  const nextLine = (withdrawn: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(withdrawn.reason);
      withdrawn.addEventListener('abort', onAbort, { once: true });
      arrived = () => {
        withdrawn.removeEventListener('abort', onAbort);
        resolve();
      };
    });
  let turn: Promise<unknown> = Promise.resolve();
  return {
    ask(prompt, withdrawn) {
      const answer = turn.then(async () => {
        withdrawn.throwIfAborted();
        open();
        // At a terminal, a line typed before this question was shown answered another (one withdrawn
        // at its deadline): not this one. Piped lines are the answers in order, read ahead.
        if ((input as { isTTY?: boolean }).isTTY) lines.length = 0;
        output.write(prompt);
        while (lines.length === 0 && !ended) await nextLine(withdrawn);
        arrived = undefined;
        return lines.shift();
      });
      turn = answer.catch(() => undefined);
      return answer;
    },
    close() {
      reader?.close();
    },
  };
}
