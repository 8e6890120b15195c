/**
 * Node names in the order people count them: n2 before n10, gpu001 before gpu010. A plain loop
 * over digit runs instead of Intl.Collator's numeric compare: sorting 10,000 names happens several
 * times per report and the collator was most of it.
 */
function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function compareNodeNames(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      let ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      // Compare the numbers without their leading zeros: by length, then digit by digit.
      let si = i;
      let sj = j;
      while (si < ei - 1 && a.charCodeAt(si) === 48) si++;
      while (sj < ej - 1 && b.charCodeAt(sj) === 48) sj++;
      const byLength = ei - si - (ej - sj);
      if (byLength !== 0) return byLength;
      for (let k = 0; k < ei - si; k++) {
        const d = a.charCodeAt(si + k) - b.charCodeAt(sj + k);
        if (d !== 0) return d;
      }
      // Equal numbers: fewer leading zeros first, as the collator did (n1 before n01).
      const zeros = si - i - (sj - j);
      if (zeros !== 0) return zeros;
      i = ei;
      j = ej;
      continue;
    }
    if (ca !== cb) {
      const la = String.fromCharCode(ca).toLowerCase();
      const lb = String.fromCharCode(cb).toLowerCase();
      if (la !== lb) return la < lb ? -1 : 1;
      return ca - cb;
    }
    i++;
    j++;
  }
  return a.length - i - (b.length - j);
}
