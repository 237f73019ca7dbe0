/**
 * The seal key's file in a state directory (`keys/`, like the approval keys), in a module of its
 * own: a command's start reads whether it is there (cli/state.ts `kindToOpen`) without loading
 * the seal or the embedded ledger.
 */
export const SEAL_KEY_FILE = 'keys/ledger-seal.key';
