import * as z from 'zod';
/**
 * Why `value` (already shaped YYYY-MM-DD) is not a real calendar date, or undefined when it is.
 * The message names the part that is wrong, so a person can fix it without guessing.
 */
export declare function calendarDateProblem(value: string): string | undefined;
/**
 * A day as people and schedules name it: `YYYY-MM-DD` that exists on the calendar (`2028-02-29`
 * yes, `2026-02-30` and `2026-13-45` no). A regex alone let impossible dates run a whole day's
 * reconciliation for a day that never comes.
 */
export declare const CalendarDate: z.ZodString;
export type CalendarDate = z.infer<typeof CalendarDate>;
