/**
 * Just enough of PEP 508 environment markers to tell whether a requirement applies on a Linux
 * machine of a given CPU and Python (https://packaging.python.org/en/latest/specifications/dependency-specifiers/#environment-markers):
 * comparisons of platform_machine, sys_platform, platform_system, os_name and python_version
 * with string literals, joined by `and` / `or` and parentheses. Anything else is unknown (null).
 */
import { compareNumberLists } from "./version.js";

export interface MarkerEnvironment {
  platform_machine: string;
  sys_platform: string;
  platform_system: string;
  os_name: string;
  /** "3.12" */
  python_version: string | null;
}

type Token = { kind: "word" | "string" | "op" | "paren"; text: string };

function tokenize(marker: string): Token[] | null {
  const tokens: Token[] = [];
  const pattern =
    /\s*(?:(\()|(\))|("[^"]*"|'[^']*')|(===|==|!=|<=|>=|~=|<|>|not in|in)|([A-Za-z_][A-Za-z0-9_.]*))/y;
  let index = 0;
  while (index < marker.length) {
    if (/^\s*$/.test(marker.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(marker);
    if (!match) return null;
    index = pattern.lastIndex;
    if (match[1] || match[2]) tokens.push({ kind: "paren", text: match[1] ?? match[2] ?? "" });
    else if (match[3]) tokens.push({ kind: "string", text: match[3].slice(1, -1) });
    else if (match[4]) tokens.push({ kind: "op", text: match[4] });
    else tokens.push({ kind: "word", text: match[5] ?? "" });
  }
  return tokens;
}

function compareVersionText(a: string, b: string): number {
  return compareNumberLists(a.split(".").map(Number), b.split(".").map(Number));
}

/** Three-valued `and` (null: unknown): one false decides, else any unknown leaves it unknown. */
function kleeneAnd(a: boolean | null, b: boolean | null): boolean | null {
  return a === false || b === false ? false : a === null || b === null ? null : true;
}

/** Three-valued `or` (null: unknown): one true decides, else any unknown leaves it unknown. */
function kleeneOr(a: boolean | null, b: boolean | null): boolean | null {
  return a === true || b === true ? true : a === null || b === null ? null : false;
}

/** true / false where the marker can be judged for this environment; null where it cannot. */
export function evaluateMarker(marker: string, env: MarkerEnvironment): boolean | null {
  const tokens = tokenize(marker);
  if (!tokens) return null;
  let position = 0;
  const peek = () => tokens[position];
  const value = (token: Token | undefined): string | null | undefined => {
    if (!token) return undefined;
    if (token.kind === "string") return token.text;
    if (token.kind === "word" && token.text in env) return env[token.text as keyof MarkerEnvironment];
    return undefined;
  };
  const comparison = (): boolean | null => {
    const left = tokens[position++];
    const op = tokens[position++];
    const right = tokens[position++];
    if (op?.kind !== "op") return null;
    const a = value(left);
    const b = value(right);
    if (a === undefined || b === undefined || a === null || b === null) return null;
    const versioned = left?.text === "python_version" || right?.text === "python_version";
    switch (op.text) {
      case "==":
      case "===":
        return versioned ? compareVersionText(a, b) === 0 : a === b;
      case "!=":
        return versioned ? compareVersionText(a, b) !== 0 : a !== b;
      case "in":
        return b.includes(a);
      case "not in":
        return !b.includes(a);
      case "<":
      case "<=":
      case ">":
      case ">=": {
        if (!versioned) return null;
        const c = compareVersionText(a, b);
        return op.text === "<" ? c < 0 : op.text === "<=" ? c <= 0 : op.text === ">" ? c > 0 : c >= 0;
      }
      default:
        return null;
    }
  };
  const atom = (): boolean | null => {
    if (peek()?.kind === "paren" && peek()?.text === "(") {
      position++;
      const inner = orExpression();
      position++; // ")"
      return inner;
    }
    return comparison();
  };
  /** Reads `operand (word operand)*` and folds it from the left with `combine`. */
  const chain = (word: "and" | "or", operand: () => boolean | null, combine: typeof kleeneAnd) => {
    let result = operand();
    while (peek()?.kind === "word" && peek()?.text === word) {
      position++;
      result = combine(result, operand());
    }
    return result;
  };
  const andExpression = () => chain("and", atom, kleeneAnd);
  function orExpression(): boolean | null {
    return chain("or", andExpression, kleeneOr);
  }
  const result = orExpression();
  return position === tokens.length ? result : null;
}
