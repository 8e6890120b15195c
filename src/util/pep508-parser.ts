/**
 * PEP 508 dependency specifiers and markers, read as Python's `packaging` 23.0 reads them
 * (packaging/_tokenizer.py and _parser.py: a context-sensitive tokenizer and a recursive-descent
 * parser), checked by src/util/pep440-differential.test.ts. Its regexes run here with Python's
 * meaning of `\b`, `$` and IGNORECASE (see pep440-python-text.ts).
 */
import { PY_WORD } from "./pep440-python-text.js";
import { SPECIFIER_SOURCE } from "./pep440-specifier.js";

export type MarkerOperand = { readonly kind: "variable" | "value"; readonly value: string };
export interface MarkerItem {
  readonly left: MarkerOperand;
  readonly op: string;
  readonly right: MarkerOperand;
}
/** packaging's MarkerList: items, nested lists (parentheses) and the words "and" / "or" between them. */
export type MarkerList = (MarkerItem | MarkerList | "and" | "or")[];

interface ParsedRequirement {
  name: string;
  url: string;
  extras: string[];
  specifier: string;
  marker: MarkerList | null;
}

/** A PEP 508 syntax error (packaging's ParserSyntaxError, or the SyntaxError of a bad string literal). */
export class Pep508SyntaxError extends Error {}

const WORD_BEFORE = `(?<!${PY_WORD})`;
const NO_WORD_AFTER = `(?!${PY_WORD})`;
/** packaging's DEFAULT_RULES, sticky (matched at the tokenizer's position, as re.match(source, pos)). */
const RULES = {
  LEFT_PARENTHESIS: /\(/y,
  RIGHT_PARENTHESIS: /\)/y,
  LEFT_BRACKET: /\[/y,
  RIGHT_BRACKET: /\]/y,
  SEMICOLON: /;/y,
  COMMA: /,/y,
  QUOTED_STRING: /'[^']*'|"[^"]*"/y,
  OP: /===|==|~=|!=|<=|>=|<|>/y,
  BOOLOP: new RegExp(`${WORD_BEFORE}(?:or|and)${NO_WORD_AFTER}`, "uy"),
  IN: new RegExp(`${WORD_BEFORE}in${NO_WORD_AFTER}`, "uy"),
  NOT: new RegExp(`${WORD_BEFORE}not${NO_WORD_AFTER}`, "uy"),
  VARIABLE: new RegExp(
    `${WORD_BEFORE}(?:python_version|python_full_version|os[._]name|sys[._]platform|platform_(?:release|system)` +
      `|platform[._](?:version|machine|python_implementation)|python_implementation|implementation_(?:name|version)` +
      `|extra)${NO_WORD_AFTER}`,
    "uy",
  ),
  SPECIFIER: new RegExp(SPECIFIER_SOURCE, "y"),
  AT: /@/y,
  URL: /[^ \t]+/y,
  // \b[a-zA-Z0-9][a-zA-Z0-9._-]*\b: the greedy part gives back characters until a word boundary.
  IDENTIFIER: new RegExp(
    `${WORD_BEFORE}[a-zA-Z0-9][a-zA-Z0-9._-]*(?:(?<=${PY_WORD})${NO_WORD_AFTER}|${WORD_BEFORE}(?=${PY_WORD}))`,
    "uy",
  ),
  WS: /[ \t]+/y,
} as const;

type TokenName = keyof typeof RULES | "END";

class Tokenizer {
  position = 0;
  private pending: string | null = null;

  constructor(readonly source: string) {}

  /** The token `name` at the position, or null. Python's `$` also matches before a final newline. */
  private match(name: TokenName): string | null {
    if (name === "END") {
      const rest = this.source.length - this.position;
      return rest === 0 || (rest === 1 && this.source[this.position] === "\n") ? "" : null;
    }
    const rule = RULES[name];
    rule.lastIndex = this.position;
    const m = rule.exec(this.source);
    return m ? m[0] : null;
  }

  /** Whether the next token is `name`; unless peeking, it is then the one read() returns. */
  check(name: TokenName, peek = false): boolean {
    const text = this.match(name);
    if (text === null) return false;
    if (!peek) this.pending = text;
    return true;
  }

  consume(name: TokenName): void {
    if (this.check(name)) this.read();
  }

  expect(name: TokenName, expected: string): string {
    if (!this.check(name)) this.fail(`Expected ${expected}`);
    return this.read();
  }

  read(): string {
    const text = this.pending as string;
    this.position += text.length;
    this.pending = null;
    return text;
  }

  fail(message: string): never {
    throw new Pep508SyntaxError(
      `${message} (at character ${this.position + 1} of ${JSON.stringify(this.source)})`,
    );
  }

  /** packaging's enclosing_tokens: `body` inside the open/close pair when the open token is there. */
  enclosing<T>(open: TokenName, close: TokenName, body: () => T): T {
    const opened = this.check(open);
    if (opened) this.read();
    const result = body();
    if (opened) {
      if (!this.check(close)) this.fail(`Expected closing ${close}`);
      this.read();
    }
    return result;
  }
}

// ------------------------------------------------------------------ requirements

/** requirement = WS? IDENTIFIER WS? extras WS? requirement_details END */
export function parseRequirementSyntax(source: string): ParsedRequirement {
  const t = new Tokenizer(source);
  t.consume("WS");
  const name = t.expect("IDENTIFIER", "package name at the start of dependency specifier");
  t.consume("WS");
  const extras = parseExtras(t);
  t.consume("WS");
  const details = parseRequirementDetails(t);
  t.expect("END", "end of dependency specifier");
  return { name, extras, ...details };
}

function parseRequirementDetails(t: Tokenizer): Pick<ParsedRequirement, "url" | "specifier" | "marker"> {
  if (t.check("AT")) {
    t.read();
    t.consume("WS");
    const url = t.expect("URL", "URL after @");
    if (t.check("END", true)) return { url, specifier: "", marker: null };
    t.expect("WS", "whitespace after URL");
    if (t.check("END", true)) return { url, specifier: "", marker: null };
    return { url, specifier: "", marker: parseRequirementMarker(t, "URL and whitespace") };
  }
  const specifier = parseSpecifierTokens(t);
  t.consume("WS");
  if (t.check("END", true)) return { url: "", specifier, marker: null };
  const after = specifier ? "version specifier" : "name and no valid version specifier";
  return { url: "", specifier, marker: parseRequirementMarker(t, after) };
}

function parseRequirementMarker(t: Tokenizer, after: string): MarkerList {
  if (!t.check("SEMICOLON")) t.fail(`Expected end or semicolon (after ${after})`);
  t.read();
  const marker = parseMarkerTokens(t);
  t.consume("WS");
  return marker;
}

function parseExtras(t: Tokenizer): string[] {
  if (!t.check("LEFT_BRACKET", true)) return [];
  return t.enclosing("LEFT_BRACKET", "RIGHT_BRACKET", () => {
    t.consume("WS");
    const extras = parseExtrasList(t);
    t.consume("WS");
    return extras;
  });
}

function parseExtrasList(t: Tokenizer): string[] {
  const extras: string[] = [];
  if (!t.check("IDENTIFIER")) return extras;
  extras.push(t.read());
  for (;;) {
    t.consume("WS");
    if (t.check("IDENTIFIER", true)) t.fail("Expected comma between extra names");
    else if (!t.check("COMMA")) break;
    t.read();
    t.consume("WS");
    extras.push(t.expect("IDENTIFIER", "extra name after comma"));
  }
  return extras;
}

/** specifier = LEFT_PARENTHESIS WS? version_many WS? RIGHT_PARENTHESIS | WS? version_many WS? */
function parseSpecifierTokens(t: Tokenizer): string {
  return t.enclosing("LEFT_PARENTHESIS", "RIGHT_PARENTHESIS", () => {
    t.consume("WS");
    let specifiers = "";
    while (t.check("SPECIFIER")) {
      specifiers += t.read();
      t.consume("WS");
      if (!t.check("COMMA")) break;
      specifiers += t.read();
      t.consume("WS");
    }
    t.consume("WS");
    return specifiers;
  });
}

// ------------------------------------------------------------------ markers

/**
 * A marker expression. As in packaging 23.0, text after the first complete expression is not
 * read (`os_name == "posix" garbage` is `os_name == "posix"`); a requirement string, which must
 * end there, refuses it.
 */
export function parseMarkerSyntax(source: string): MarkerList {
  return parseMarkerTokens(new Tokenizer(source));
}

/** marker = marker_atom (BOOLOP marker_atom)* */
function parseMarkerTokens(t: Tokenizer): MarkerList {
  const expression: MarkerList = [parseMarkerAtom(t)];
  while (t.check("BOOLOP")) {
    const word = t.read() as "and" | "or";
    expression.push(word, parseMarkerAtom(t));
  }
  return expression;
}

function parseMarkerAtom(t: Tokenizer): MarkerItem | MarkerList {
  t.consume("WS");
  let marker: MarkerItem | MarkerList;
  if (t.check("LEFT_PARENTHESIS", true)) {
    marker = t.enclosing("LEFT_PARENTHESIS", "RIGHT_PARENTHESIS", () => {
      t.consume("WS");
      const inner = parseMarkerTokens(t);
      t.consume("WS");
      return inner;
    });
  } else {
    marker = parseMarkerItem(t);
  }
  t.consume("WS");
  return marker;
}

function parseMarkerItem(t: Tokenizer): MarkerItem {
  t.consume("WS");
  const left = parseMarkerOperand(t);
  t.consume("WS");
  const op = parseMarkerOp(t);
  t.consume("WS");
  const right = parseMarkerOperand(t);
  t.consume("WS");
  return { left, op, right };
}

function parseMarkerOperand(t: Tokenizer): MarkerOperand {
  if (t.check("VARIABLE")) {
    const name = t.read().replace(/\./g, "_");
    const value = name === "python_implementation" ? "platform_python_implementation" : name;
    return { kind: "variable", value };
  }
  if (t.check("QUOTED_STRING")) return { kind: "value", value: pythonStringLiteral(t.read()) };
  return t.fail("Expected a marker variable or quoted string");
}

function parseMarkerOp(t: Tokenizer): string {
  if (t.check("IN")) {
    t.read();
    return "in";
  }
  if (t.check("NOT")) {
    t.read();
    t.expect("WS", "whitespace after 'not'");
    t.expect("IN", "'in' after 'not'");
    return "not in";
  }
  if (t.check("OP")) return t.read();
  return t.fail("Expected marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, not in");
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/** The value of `digits` hex digits at `body[at]`, or a syntax error as Python's unicodeescape gives. */
function hexEscape(body: string, at: number, digits: number): string {
  const hex = body.slice(at, at + digits);
  if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex))
    throw new Pep508SyntaxError(`truncated \\x escape in ${body}`);
  const code = parseInt(hex, 16);
  if (code > 0x10ffff) throw new Pep508SyntaxError(`illegal Unicode character in ${body}`);
  return String.fromCodePoint(code);
}

/**
 * packaging reads a quoted string with ast.literal_eval: Python's escapes apply, an unknown
 * escape stays as written, a line break ends the literal too early (a syntax error).
 */
function pythonStringLiteral(token: string): string {
  if (token.includes("\0")) throw new Pep508SyntaxError("a string literal cannot hold a null character");
  const body = token.slice(1, -1).replace(/\r\n?/g, "\n");
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (char === "\n") throw new Pep508SyntaxError(`unterminated string literal ${token}`);
    if (char !== "\\") {
      out += char;
      continue;
    }
    const next = body[++i];
    if (next === undefined) throw new Pep508SyntaxError(`unterminated string literal ${token}`);
    if (next === "\n") continue;
    if (next in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[next];
    else if (next >= "0" && next <= "7") {
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))?.[0] as string;
      out += String.fromCodePoint(parseInt(octal, 8));
      i += octal.length - 1;
    } else if (next === "x" || next === "u" || next === "U") {
      const digits = next === "x" ? 2 : next === "u" ? 4 : 8;
      out += hexEscape(body, i + 1, digits);
      i += digits;
    } else if (next === "N") throw new Pep508SyntaxError(`\\N{...} escapes are not read here: ${token}`);
    else out += `\\${next}`;
  }
  return out;
}
