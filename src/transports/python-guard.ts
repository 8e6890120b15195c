/**
 * The first line of every script gpuprep hands an interpreter through `python -` or `python -c`.
 *
 * For both forms CPython puts "" (the current directory) first on sys.path, after site has run
 * and before the script's first import: a `json.py` in a cloned project would run under doctor
 * (issue 28). `-I` and `-P` would avoid it but drop PYTHONPATH and the user site (which doctor
 * reports) or need Python 3.11; removing the entry as the first statement works on every Python
 * gpuprep supports (>= 3.8). `import sys` is a builtin, never looked up on sys.path. An absolute
 * PYTHONPATH entry the user set stays: that is their environment, not the directory's.
 * probe.py and torch_env.py begin with the same line (test/security/cwd-imports.test.ts).
 */
export const CWD_IMPORT_GUARD = 'import sys; sys.path[:] = [p for p in sys.path if p != ""]';
