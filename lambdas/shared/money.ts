/**
 * An amount in a currency's minor units (what an approval's `amount` and a tool's `aggregate`
 * hold), as a person reads it. ISO 4217 says how many digits the minor unit has: two for most
 * currencies, none for those whose minor unit is the unit itself (JPY, KRW: 725 is ¥725), three
 * for the dinars. Dividing every amount by 100 showed ¥725 as "7.25 JPY" above the approval page's
 * buttons. A code not listed here (or not a currency) reads with two.
 */
const ZERO_DIGITS = ['bif', 'clp', 'djf', 'gnf', 'isk', 'jpy', 'kmf', 'krw', 'pyg', 'rwf', 'ugx', 'uyi', 'vnd', 'vuv', 'xaf', 'xof', 'xpf'];
const THREE_DIGITS = ['bhd', 'iqd', 'jod', 'kwd', 'lyd', 'omr', 'tnd'];
const FOUR_DIGITS = ['clf', 'uyw'];
const MINOR_DIGITS: ReadonlyMap<string, number> = new Map([...ZERO_DIGITS.map((code) => [code, 0] as const), ...THREE_DIGITS.map((code) => [code, 3] as const), ...FOUR_DIGITS.map((code) => [code, 4] as const)]);

/** `72500 usd` → `725.00 USD`; `72500 jpy` → `72500 JPY`; `72500 kwd` → `72.500 KWD`. */
export function formatAmount(amount: { minor: number; currency: string }): string {
  const digits = MINOR_DIGITS.get(amount.currency.toLowerCase()) ?? 2;
  return `${(amount.minor / 10 ** digits).toFixed(digits)} ${amount.currency.toUpperCase()}`;
}
