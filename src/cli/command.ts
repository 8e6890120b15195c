/** The shape every subcommand module has: its help text and a run function returning the exit code. */
export interface Command {
  name: string;
  summary: string;
  help: string;
  /** 2 to 4 real invocations, each with what it does; help prints them under "Examples:". */
  examples: readonly (readonly [invocation: string, what: string])[];
  /** 0: clean / passed; 1: findings of error severity / checks failed; 2: the tool could not run. */
  run(argv: string[]): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_TOOL_ERROR = 2;
