"""Repack installed distributions (and everything they require) from a venv into wheels.

The device machine has no network: its own torch venv is the only source of torch wheels, so the
native e2e builds its wheelhouse from it. Each distribution becomes a wheel of the files its
RECORD lists inside site-packages, with a rewritten RECORD (sha256 of what is in the wheel).
usage: python repack-wheels.py SITE_PACKAGES OUT_DIR NAME...
"""

import base64
import csv
import hashlib
import io
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def distributions(site: Path) -> dict[str, metadata.Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site)])}


def closure(dists: dict[str, metadata.Distribution], roots: list[str]) -> set[str]:
    env = default_environment()
    wanted: list[tuple[str, frozenset[str]]] = [(canonicalize_name(r), frozenset()) for r in roots]
    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    while wanted:
        name, extras = wanted.pop()
        if (name, extras) in seen or name not in dists:
            continue
        seen.add((name, extras))
        names.add(name)
        for text in dists[name].requires or []:
            req = Requirement(text)
            applies = any(
                req.marker is None or req.marker.evaluate({**env, "extra": extra})
                for extra in (extras or {""})
            )
            if applies:
                wanted.append((canonicalize_name(req.name), frozenset(req.extras)))
    return names


def wheel_tag(dist: metadata.Distribution) -> str:
    text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    if not tags:
        return "py3-none-any"
    parts = [sorted({t.split("-")[i] for t in tags}) for i in range(3)]
    return "-".join(".".join(p) for p in parts)


def repack(dist: metadata.Distribution, site: Path, out: Path) -> Path:
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    target = out / f"{name}-{dist.version}-{wheel_tag(dist)}.whl"
    record_name = None
    rows = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zf:
        for entry in dist.files or []:
            path = str(entry)
            if path.startswith("..") or "__pycache__" in path:
                continue
            # Only the distribution's own dist-info (top level) is metadata; a vendored package's
            # dist-info inside it (setuptools/_vendor/wheel-*.dist-info) is ordinary content.
            top_dist_info = path.count("/") == 1 and path.split("/")[0].endswith(".dist-info")
            if top_dist_info and path.endswith("/RECORD"):
                record_name = path
                continue
            if top_dist_info and (path.endswith("/INSTALLER") or path.endswith("/direct_url.json")):
                continue
            source = site / path
            if not source.is_file():
                continue
            data = source.read_bytes()
            zf.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append([path, f"sha256={digest}", str(len(data))])
        record_name = record_name or f"{name}-{dist.version}.dist-info/RECORD"
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows + [[record_name, "", ""]])
        zf.writestr(record_name, buffer.getvalue())
    return target


def main() -> None:
    site, out, roots = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    out.mkdir(parents=True, exist_ok=True)
    dists = distributions(site)
    for name in sorted(closure(dists, roots)):
        print(repack(dists[name], site, out).name)


if __name__ == "__main__":
    main()
