"""The reference side of the PEP 440 / PEP 508 differential (src/util/pep440-differential.test.ts,
bench/pep440-differential.mjs): Python's own `packaging` answers each question read from stdin.

Input: JSON lines, one question each; output: one JSON line per question, in order. The first
output line is the packaging version in use. Questions (k is the kind):
  {"k": "v", "v": TEXT}            version: null (InvalidVersion) or
                                   [str, public, base_version, is_pre, is_post, is_dev, pre, post, dev, local]
  {"k": "s", "s": TEXT}            specifier set: null (InvalidSpecifier) or [str, prereleases]
  {"k": "c", "v": TEXT, "s": TEXT} contains(v, prereleases=None/True/False): 3 of true/false/"E"
  {"k": "o", "a": TEXT, "b": TEXT} ordering: -1, 0 or 1
  {"k": "f", "s": TEXT, "vs": [..]} filter with prereleases None/True/False: indices kept
  (c, o and f answer "skip" where a version or the set is invalid: the v and s questions judge those)
  {"k": "r", "r": TEXT}            Requirement: "E" or [name, sorted extras, str(specifier), url, str(marker), str]
  {"k": "m", "m": TEXT, "e": ENV}  Marker: "E" or [str(marker), evaluate(ENV) or "E"]
"E" marks an exception (packaging raised). Numbers are sent as text: Python's ints have no bound.
"""

import json
import sys

import packaging
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


VERSIONS = {}
SETS = {}


def parsed_version(text):
    """Version(text), parsed once per text (None for an invalid one)."""
    if text not in VERSIONS:
        try:
            VERSIONS[text] = Version(text)
        except InvalidVersion:
            VERSIONS[text] = None
    return VERSIONS[text]


def number(value):
    return None if value is None else str(value)


def version_facts(text):
    v = parsed_version(text)
    if v is None:
        return None
    pre = None if v.pre is None else [v.pre[0], str(v.pre[1])]
    return [str(v), v.public, v.base_version, v.is_prerelease, v.is_postrelease, v.is_devrelease,
            pre, number(v.post), number(v.dev), v.local]


def guarded(question):
    try:
        return question()
    except Exception:  # packaging's own exceptions, and the ValueError/KeyError it lets through
        return "E"


def specifier_facts(text):
    s = parsed_set(text)
    if s is None:
        return None
    return [str(s), guarded(lambda: s.prereleases)]


def parsed_set(text):
    """SpecifierSet(text), parsed once per text (None for an invalid one)."""
    if text not in SETS:
        try:
            SETS[text] = SpecifierSet(text)
        except InvalidSpecifier:
            SETS[text] = None
    return SETS[text]


def contains(request):
    s, v = parsed_set(request["s"]), parsed_version(request["v"])
    if s is None or v is None:
        return "skip"
    return [guarded(lambda mode=mode: s.contains(v, prereleases=mode)) for mode in (None, True, False)]


def compare(request):
    a, b = parsed_version(request["a"]), parsed_version(request["b"])
    if a is None or b is None:
        return "skip"
    return -1 if a < b else 0 if a == b else 1


def filtered(request):
    s, versions = parsed_set(request["s"]), [parsed_version(text) for text in request["vs"]]
    if s is None or None in versions:
        return "skip"
    out = []
    for mode in (None, True, False):
        kept = guarded(lambda mode=mode: {id(v) for v in s.filter(versions, prereleases=mode)})
        out.append(kept if kept == "E" else [i for i, v in enumerate(versions) if id(v) in kept])
    return out


def requirement(request):
    try:
        r = Requirement(request["r"])
    except Exception:
        return "E"
    marker = None if r.marker is None else str(r.marker)
    return [r.name, sorted(r.extras), str(r.specifier), r.url, marker, str(r)]


def marker(request):
    try:
        m = Marker(request["m"])
    except Exception:
        return "E"
    return [str(m), guarded(lambda: m.evaluate(request["e"]))]


HANDLERS = {
    "v": lambda r: version_facts(r["v"]),
    "s": lambda r: specifier_facts(r["s"]),
    "c": contains,
    "o": compare,
    "f": filtered,
    "r": requirement,
    "m": marker,
}


def main():
    answers = [json.dumps(packaging.__version__)]
    for line in sys.stdin:
        request = json.loads(line)
        # Anything packaging raises outside the guarded calls is an answer too (other packaging
        # versions raise in other places).
        answers.append(json.dumps(guarded(lambda: HANDLERS[request["k"]](request))))
    sys.stdout.write("\n".join(answers) + "\n")


if __name__ == "__main__":
    main()
