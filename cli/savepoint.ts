/**
 * The CLI's entry. zod compiles a parser (new Function) for each object schema on its first parse:
 * a command that ends after a run or a read parses each schema a few times, where compiling costs
 * more than it saves (about a twentieth of a `savepoint run`'s CPU: issue 38). The interpreted
 * parse accepts and refuses the same input. zod reads the choice when an object schema is made,
 * so it is set here, before the CLI (cli/main.ts) and the modules it imports make theirs: set as
 * a command starts (commander's preAction), it reached only the schemas of modules loaded later,
 * and the others still compiled their parsers (`savepoint replay`: ~2 ms of its CPU).
 */
import * as z from 'zod';
import { staysUp } from './stays-up.js';

if (!staysUp(process.argv)) z.config({ jitless: true });
await import('./main.js');
