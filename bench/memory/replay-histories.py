"""memory.py's allocator model replayed on real allocation histories, the order of segment addresses varied.

Each history is a real run's own allocations and frees in order (memory.py trial with historyOut:
rows [action, address, bytes, stream, frames]). The model is replayed three ways: with the
addresses the real cudaMalloc returned for its segments, taken in order ("real"); with each new
segment below the last (memory.py's AllocatorModel); and with each new segment above the last (the
model before). Its peak reserve is compared with the real one (the sum of the history's segments).
Where addresses decide anything it is which of two equal free blocks best fit takes (the lower).

usage: python3 bench/memory/replay-histories.py HISTORY.real.json ... (or a .tgz holding them)
"""
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "memory"))
import memory  # noqa: E402

MIB = 2 ** 20


class Upward(memory.AllocatorModel):
    """Each new segment above the last."""

    def __init__(self):
        memory.AllocatorModel.__init__(self)
        self.next_addr = 1 << 40

    def _grow(self, size, small):
        want = self.segment_size(size)
        block = memory._Block(self.next_addr, want, small)
        self.next_addr += want + (1 << 30)
        self._reserve(want)
        return block


class RealAddresses(memory.AllocatorModel):
    """Each new segment where the real run's next segment was."""

    def __init__(self, addresses):
        memory.AllocatorModel.__init__(self)
        self.addresses = list(addresses)

    def _grow(self, size, small):
        want = self.segment_size(size)
        block = memory._Block(self.addresses.pop(0) if self.addresses else -len(self.addresses) - 1, want, small)
        self._reserve(want)
        return block


def replay(rows, model):
    for row in rows:
        if row[0] == "alloc":
            model.malloc(row[1], row[2])
        elif row[0] == "free_completed":
            model.free(row[1])
    return model.peak_reserved


def histories(paths):
    for path in paths:
        if path.endswith(".tgz"):
            with tarfile.open(path) as archive:
                for member in sorted(archive.getmembers(), key=lambda m: m.name):
                    if member.name.endswith(".real.json"):
                        yield os.path.basename(member.name), json.load(archive.extractfile(member))
        else:
            with open(path) as handle:
                yield os.path.basename(path), json.load(handle)


def main():
    print("| history | segments | below the last | real peak reserved MiB | real addresses | each below (model) | each above (before) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, data in histories(sys.argv[1:]):
        rows = data["rows"]
        segments = [r for r in rows if r[0] == "segment_alloc"]
        held = peak = 0
        for row in rows:
            if row[0] == "segment_alloc":
                held += row[2]
            elif row[0] == "segment_free":
                held -= row[2]
            peak = max(peak, held)
        below = sum(1 for a, b in zip(segments, segments[1:]) if b[1] < a[1])
        cells = [replay(rows, RealAddresses([s[1] for s in segments])), replay(rows, memory.AllocatorModel()),
                 replay(rows, Upward())]
        print("| %s | %d | %d | %d | %s |" % (name.split(".")[0], len(segments), below, peak // MIB,
                                             " | ".join("%+.2f %%" % (100.0 * (c - peak) / peak) for c in cells)))


if __name__ == "__main__":
    main()
