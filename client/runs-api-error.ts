/** A refusal of the API: its HTTP status and the message naming the problem. */
export class RunsApiError extends Error {
  /** Always `RunsApiError`. */
  override readonly name = 'RunsApiError';
  constructor(
    /** The HTTP status the API answered (400 bad input, 403 the credential, 404 no such run, …). */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
