import { describe, expect, it } from 'vitest';
import { sameJson } from '../../local/replay/answers.js';

/**
 * Replay compares each request's messages with the recording's by `sameJson`, not by writing both
 * as JSON (issue 38): it must say equal exactly when JSON.stringify writes the same text.
 */
describe("replay's sameJson", () => {
  const values: unknown[] = [
    null, true, false, 0, -0, 1, 1.5, NaN, Infinity, '', 'a', '0', 'null',
    [], [1], [1, 2], [2, 1], [undefined], [null], [() => 1], ['a', { b: 1 }],
    {}, { a: 1 }, { a: 1, b: 2 }, { b: 2, a: 1 }, { a: undefined }, { a: 1, c: undefined }, { a: () => 1 }, { a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '{"ok":true}' }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '{"ok":true}', is_error: true }] },
    { role: 'user', content: [{ tool_use_id: 't1', type: 'tool_result', content: '{"ok":true}' }] },
    { when: new Date(0) }, { when: '1970-01-01T00:00:00.000Z' },
    // A field JSON leaves out, first, last or alone on one side; an item it writes as null.
    { c: undefined, a: 1 }, { a: 1, b: () => 1 }, { s: Symbol('s'), a: 1 }, { a: 1, b: 2, c: undefined }, [undefined, 1], [null, 1], [Symbol('s'), 1],
    { a: { b: undefined } }, { a: {} }, { a: [0] }, { a: [-0] }, { a: [NaN] }, { a: [null] },
  ];

  it('says two values are the same exactly when JSON.stringify writes them alike', () => {
    for (const a of values) {
      for (const b of values) expect(sameJson(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(JSON.stringify(a) === JSON.stringify(b));
    }
  });

  it('finds a difference deep in a long conversation (a changed tool result), and none in a copy', () => {
    const conversation = Array.from({ length: 50 }, (_, turn) => ({ role: turn % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `turn ${turn}` }] }));
    const copy = JSON.parse(JSON.stringify(conversation)) as typeof conversation;
    expect(sameJson(conversation, copy)).toBe(true);
    copy[37]!.content[0]!.text = 'turn 37 ';
    expect(sameJson(conversation, copy)).toBe(false);
  });
});
