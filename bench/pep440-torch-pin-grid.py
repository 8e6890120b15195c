"""What one packaging answers for torch pins against NGC and wheel versions: one line per
(version, pin), "installed" (contains with prereleases=True, pip's question for an installed
torch), "default" (prereleases=None), "no-pre" (False) and "index" (filter([version])).
Run it under two Pythons and diff the outputs to see where two packaging versions differ:

    diff <(/usr/bin/python3 bench/pep440-torch-pin-grid.py) <(OTHER_PYTHON bench/pep440-torch-pin-grid.py)
"""

import packaging
from packaging.specifiers import SpecifierSet

VERSIONS = [
    "2.10.0a0+b558c986e8.nv25.11", "2.9.0a0+50eac811a6.nv25.09", "2.8.0a0+5228986c39.nv25.08",
    "2.7.0a0+7c8ec84dab.nv25.03", "2.6.0a0+ecf3bae40a", "2.1.0a0+32f93b1", "1.14.0a0+44dac51",
    "2.5.1+cu124", "2.8.0+cu128", "2.7.1", "2.8.0", "2.8.0.post1", "2.9.0.dev20250701+cu128", "2.8.0rc1",
]


def pins():
    for major, minor in [(1, 13), (1, 14), (2, 0), (2, 1), (2, 5), (2, 6), (2, 7), (2, 8), (2, 9), (2, 10)]:
        for op in ["<", "<=", ">", ">=", "==", "!=", "~="]:
            for release in [f"{major}.{minor}", f"{major}.{minor}.0", f"{major}.{minor}.1"]:
                yield op + release
        yield from [f"=={major}.{minor}.*", f"!={major}.{minor}.*", f">={major}.{minor},<{major}.{minor + 1}",
                    f"<{major}.{minor}.0a0", f">={major}.{minor}.0a0", f"=={major}.{minor}.0a0",
                    f">{major}.{minor}.0a0", f"=={major}.{minor}+cu128"]


def main():
    print(f"# packaging {packaging.__version__}")
    for pin in pins():
        specifier = SpecifierSet(pin)
        for version in VERSIONS:
            answers = [specifier.contains(version, prereleases=mode) for mode in (True, None, False)]
            index = list(specifier.filter([version])) != []
            print(f"{version} {pin} installed={answers[0]} default={answers[1]} no-pre={answers[2]} index={index}")


if __name__ == "__main__":
    main()
