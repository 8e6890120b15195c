/** What a generator produces: a path relative to the project, its content, and whether it is executable. */
export interface GeneratedFile {
  path: string;
  content: string;
  executable: boolean;
  /**
   * "generated": gpuprep owns the whole file. "user-file": an edit of a file the user owns
   * (pyproject.toml), derived from its current content, so nothing in it is lost.
   */
  kind: "generated" | "user-file";
  /** One line on what the file is for (printed in the summary). */
  purpose: string;
}
