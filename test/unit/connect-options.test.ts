import { describe, expect, it } from 'vitest';
import { connect, type ConnectOptions } from '../../client/index.js';

/** `connect`'s options, as a plain JavaScript caller may get them wrong: refused before any request, naming the option. */
describe('connect options', () => {
  it.each<[string, unknown, string]>([
    ['none', {}, 'connect: give one of stateDir, url (with its credential) or stack'],
    ['two', { stateDir: '.savepoint', url: 'http://127.0.0.1:4321', credential: 'c' }, 'connect: give one of stateDir, url (with its credential) or stack, not stateDir and url'],
    ['an empty state directory', { stateDir: '' }, 'connect: stateDir: expected a non-empty string, got ""'],
    ['a url that is not one', { url: 'not a url', credential: 'c' }, 'connect: url: expected an http(s) origin such as http://127.0.0.1:4321, got "not a url"'],
    ['a url of another scheme', { url: 'file:///tmp', credential: 'c' }, 'connect: url: expected an http(s) origin such as http://127.0.0.1:4321, got "file:///tmp"'],
    ['a url without its credential', { url: 'http://127.0.0.1:4321' }, "connect: credential: expected the serve's credential (the first path segment of its runs API's address in engine.json)"],
  ])('refuses %s', async (_case, options, message) => {
    await expect(connect(options as ConnectOptions)).rejects.toThrow(new TypeError(message));
  });
});
