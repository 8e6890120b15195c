"""Writes the tiny wheels (and one sdist) the Docker e2e installs offline (no network).

tinyhelper 1.0 requires numpy (which the base image provides: the constraints must keep it).
tinyext 1.0 is only an sdist: the e2e plans it with --build-from-source, so the generated
Dockerfile's build stage must turn it into a wheel (setuptools, no build isolation).
torch 99.0 is a fake: it is what a PyPI torch replacing NVIDIA's build looks like, and the
running container must refuse to install it.

usage: python3 make-wheels.py WHEELHOUSE_DIR
"""
import base64
import hashlib
import io
import sys
import tarfile
import zipfile
from pathlib import Path


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(out: Path, name: str, version: str, requires: list, module: str) -> None:
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module.encode(),
        f"{dist_info}/METADATA": (
            "Metadata-Version: 2.1\n"
            f"Name: {name}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires)
        ).encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: gpuprep-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [record_line(path, data) for path, data in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(out / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)


def write_sdist(out: Path, name: str, version: str, module: str) -> None:
    root = f"{name}-{version}"
    files = {
        f"{root}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{root}/setup.py": f"from setuptools import setup\n\nsetup(name={name!r}, version={version!r}, packages=[{name!r}])\n",
        f"{root}/{name}/__init__.py": module,
    }
    with tarfile.open(out / f"{root}.tar.gz", "w:gz") as sdist:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_wheel(out, "tinyhelper", "1.0", ["numpy"], "import numpy\nVALUE = numpy.arange(3).sum()\n")
    write_wheel(out, "torch", "99.0", [], "raise ImportError('the fake torch from the e2e wheelhouse')\n")
    write_sdist(out, "tinyext", "1.0", "VALUE = 'built from source'\n")


if __name__ == "__main__":
    main()
