import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitWhenWritten } from '../../cli/program.js';

/** A stream that finishes each write only when told to (a pipe whose reader is slow). */
function slowStream() {
  const pending: (() => void)[] = [];
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending.push(() => {
        written.push(String(chunk));
        done();
      });
    },
  });
  const drain = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { stream, written, drain };
}

describe('exitWhenWritten (a command with nothing left to run ends its process)', () => {
  it('ends the process only once every stream has written what it was given', async () => {
    const out = slowStream();
    const err = slowStream();
    out.stream.write('{"identical":true}\n');
    err.stream.write('a note\n');
    let exited = false;
    const ending = exitWhenWritten([out.stream, err.stream], () => (exited = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(exited).toBe(false);
    await out.drain();
    expect(exited).toBe(false);
    await err.drain();
    await ending;
    expect(exited).toBe(true);
    expect(out.written.join('')).toBe('{"identical":true}\n');
    expect(err.written.join('')).toBe('a note\n');
  });

  it('ends it too when a stream can no longer write (its reader is gone)', async () => {
    const closed = new Writable({ write: (_chunk, _encoding, done) => done() });
    closed.on('error', () => {});
    closed.destroy();
    let exited = false;
    await exitWhenWritten([closed], () => (exited = true));
    expect(exited).toBe(true);
  });
});
