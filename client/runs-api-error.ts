/** A refusal of the API: its HTTP status and the message naming the problem. */
export class RunsApiError extends Error {
  override readonly name = 'RunsApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
