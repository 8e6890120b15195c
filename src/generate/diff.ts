/** A unified diff of two texts (line LCS, 3 lines of context), for --dry-run. Small files only. */

type Op = { kind: " " | "-" | "+"; line: string };

function operations(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: LCS length of a[i..] and b[j..]
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i]! });
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!))
      ops.push({ kind: "+", line: b[j++]! });
    else ops.push({ kind: "-", line: a[i++]! });
  }
  return ops;
}

function lines(text: string): string[] {
  const list = text.split("\n");
  if (list[list.length - 1] === "") list.pop();
  return list;
}

export function unifiedDiff(path: string, before: string | null, after: string, context = 3): string {
  const ops = operations(before === null ? [] : lines(before), lines(after));
  const out = [`--- ${before === null ? "/dev/null" : `a/${path}`}`, `+++ b/${path}`];
  let index = 0;
  let oldLine = 1;
  let newLine = 1;
  const positions = ops.map((op) => {
    const at = { old: oldLine, new: newLine };
    if (op.kind !== "+") oldLine++;
    if (op.kind !== "-") newLine++;
    return at;
  });
  while (index < ops.length) {
    if (ops[index]!.kind === " ") {
      index++;
      continue;
    }
    const start = Math.max(0, index - context);
    let end = index;
    // Extend the hunk while changes are within 2*context lines of each other.
    for (let k = index; k < ops.length; k++) {
      if (ops[k]!.kind !== " ") end = k;
      else if (k - end > 2 * context) break;
    }
    const stop = Math.min(ops.length, end + context + 1);
    const hunk = ops.slice(start, stop);
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    const first = positions[start]!;
    out.push(
      `@@ -${oldCount === 0 ? first.old - 1 : first.old},${oldCount} +${newCount === 0 ? first.new - 1 : first.new},${newCount} @@`,
    );
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    index = stop;
  }
  return out.length > 2 ? out.join("\n") + "\n" : "";
}
