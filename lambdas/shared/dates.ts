import * as z from 'zod';

const SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Days in `month` (1–12) of `year`, by the Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Why `value` (already shaped YYYY-MM-DD) is not a real calendar date, or undefined when it is.
 * The message names the part that is wrong, so a person can fix it without guessing.
 */
export function calendarDateProblem(value: string): string | undefined {
  const match = SHAPE.exec(value);
  if (!match) return `${JSON.stringify(value)} is not a date YYYY-MM-DD`;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1) return `${value} is not a calendar date: there is no year 0000`;
  if (month < 1 || month > 12) return `${value} is not a calendar date: month ${match[2]} is not 01–12`;
  const last = daysInMonth(year, month);
  if (day < 1 || day > last) return `${value} is not a calendar date: ${MONTHS[month - 1]} ${year} has days 01–${last}`;
  return undefined;
}

/**
 * A day as people and schedules name it: `YYYY-MM-DD` that exists on the calendar (`2028-02-29`
 * yes, `2026-02-30` and `2026-13-45` no). A regex alone let impossible dates run a whole day's
 * reconciliation for a day that never comes.
 */
export const CalendarDate = z
  .string()
  .regex(SHAPE, 'expected a date YYYY-MM-DD')
  .superRefine((value, context) => {
    // A value of the wrong shape already has the regex's issue; one message per problem.
    if (!SHAPE.test(value)) return;
    const problem = calendarDateProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
/** A `YYYY-MM-DD` date that exists in the calendar (the schema above). */
export type CalendarDate = z.infer<typeof CalendarDate>;
