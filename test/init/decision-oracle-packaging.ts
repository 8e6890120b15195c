/**
 * The decision oracle's PEP 440 answers, from Python's own `packaging` (Debian's python3-packaging
 * 23.0 for /usr/bin/python3), never from src/util/pep440: every (specifier, version) question the
 * oracle may ask is collected first, then answered by one Python process reading them all from stdin.
 * `contains` is asked as pip asks it of an installed or candidate version: `prereleases=True`
 * (pip's resolver, factory.py `_get_installed_candidate`), so 2.8.0a0 is below `>=2.8` and outside
 * `<2.8`, and inside `==2.8.*`.
 */
import { spawnSync } from "node:child_process";

const PYTHON = "/usr/bin/python3";

const SCRIPT = `
import json, sys
import packaging
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

request = json.load(sys.stdin)
versions = []
for text in request["versions"]:
    try:
        versions.append(Version(text))
    except InvalidVersion:
        versions.append(None)
answers = []
for spec, indexes in request["questions"]:
    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier:
        answers.append("x" * len(indexes))
        continue
    answers.append("".join(
        "x" if versions[i] is None else ("1" if specifier.contains(versions[i], prereleases=True) else "0")
        for i in indexes))
json.dump({"packaging": packaging.__version__, "answers": answers}, sys.stdout)
`;

/** The questions first (`ask`), then one batch (`answerAll`), then the answers (`contains`). */
export class PackagingOracle {
  private readonly versions: string[] = [];
  private readonly versionIndex = new Map<string, number>();
  private readonly questions = new Map<string, Set<number>>();
  private readonly answers = new Map<string, boolean | null>();
  /** packaging.__version__ of the interpreter that answered. */
  packagingVersion: string | null = null;
  /** How many (specifier, version) pairs the batch answered. */
  asked = 0;

  /** Register every pair of `specifiers` x `versions` to be answered. */
  ask(specifiers: Iterable<string>, versions: Iterable<string>): void {
    const indexes = [...versions].map((v) => this.indexOf(v));
    for (const spec of specifiers) {
      const set = this.questions.get(spec) ?? new Set<number>();
      for (const i of indexes) set.add(i);
      this.questions.set(spec, set);
    }
  }

  private indexOf(version: string): number {
    let index = this.versionIndex.get(version);
    if (index === undefined) {
      index = this.versions.length;
      this.versions.push(version);
      this.versionIndex.set(version, index);
    }
    return index;
  }

  /** One Python process answers every registered question. */
  answerAll(): void {
    const questions = [...this.questions].map(([spec, set]) => [spec, [...set]] as const);
    const result = spawnSync(PYTHON, ["-s", "-c", SCRIPT], {
      input: JSON.stringify({ versions: this.versions, questions }),
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.status !== 0) throw new Error(`packaging batch failed: ${result.stderr || result.error}`);
    const parsed = JSON.parse(result.stdout) as { packaging: string; answers: string[] };
    this.packagingVersion = parsed.packaging;
    questions.forEach(([spec, indexes], q) => {
      const line = parsed.answers[q] ?? "";
      indexes.forEach((versionIndex, i) => {
        const answer = line[i];
        this.answers.set(
          `${spec}\u0000${this.versions[versionIndex]}`,
          answer === "1" ? true : answer === "0" ? false : null,
        );
      });
      this.asked += indexes.length;
    });
  }

  /** packaging's answer: true, false, or null (either side is not PEP 440). Throws for a pair never asked. */
  contains(specifier: string, version: string): boolean | null {
    if (specifier === "") return true;
    const key = `${specifier}\u0000${version}`;
    if (!this.answers.has(key))
      throw new Error(`the oracle asked packaging nothing about ${version} in "${specifier}"`);
    return this.answers.get(key) ?? null;
  }
}
