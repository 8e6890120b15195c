/**
 * Errors a user can cause (bad flag, unreadable file, broken snapshot, a Python that hangs).
 * The CLI prints them as one line plus a hint and exits 2; they never show a stack trace.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly hint: string | null = null,
  ) {
    super(message);
    this.name = "UserError";
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
