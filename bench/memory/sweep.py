"""The registry sweep of `gpuprep memory`: every model type of the installed transformers that has a
class for causal LM, masked LM, seq2seq LM, image classification, speech seq2seq, CTC, or a base
model, built from its config class's defaults with at most 2 layers per stack (widths, vocabularies
and expert counts kept), then traced for one training step (AdamW, bf16 autocast over float32
weights, batch 2, 64 tokens) by src/memory/memory.py exactly as `gpuprep memory --model` does.

Each (model type, task) row says: built or not (and why), traced, or fell back to the formula
tier (and why the trace could not follow it), with the traced peak, the parameter count and the
trace's seconds. Nothing is downloaded: models come from config classes.

usage:
  python3 bench/memory/sweep.py --out sweep.jsonl [--workers 8] [--device cuda|cpu] [--only a,b] [--limit N]
  python3 bench/memory/sweep.py --table sweep.jsonl            # the markdown table and the counts
"""
import argparse
import json
import multiprocessing
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEMORY_PY_DIRS = [os.path.join(HERE, "..", "..", "src", "memory"), os.path.join(HERE, "..", "..", "dist", "memory")]

# The tasks of issue 24, in the order a model type's row is chosen, with transformers' mapping.
TASKS = [
    ("causal-lm", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"),
    ("seq2seq-lm", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"),
    ("speech-seq2seq", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES"),
    ("ctc", "MODEL_FOR_CTC_MAPPING_NAMES"),
    ("masked-lm", "MODEL_FOR_MASKED_LM_MAPPING_NAMES"),
    ("image-classification", "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES"),
    ("base", "MODEL_MAPPING_NAMES"),
]
LAYER_KEYS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
              "num_decoder_layers", "num_encoder_layers", "num_text_layers", "num_vision_layers")
MAX_LAYERS = 2


def pairs():
    """(model type, task, class name) for every mapping entry of the tasks above."""
    import transformers.models.auto.modeling_auto as auto

    out = []
    for task, mapping in TASKS:
        for model_type, names in getattr(auto, mapping).items():
            name = names[0] if isinstance(names, (list, tuple)) else names
            out.append((model_type, task, name))
    return out


def shrink(data, depth=0):
    """At most MAX_LAYERS layers per stack, in this config and its sub-configs; lists as long as a
    stack (per-layer types, window sizes) cut to match; stage depths (Swin, ConvNeXt) to 1 each."""
    out = dict(data)
    old_counts = set()
    for key in LAYER_KEYS:
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_LAYERS:
            # Swin's num_layers is len(depths): a stage count, not a stack to shrink.
            if key == "num_layers" and isinstance(out.get("depths"), list) and value == len(out["depths"]):
                continue
            old_counts.add(value)
            out[key] = MAX_LAYERS
    if isinstance(out.get("depths"), list) and all(isinstance(d, int) for d in out["depths"]):
        out["depths"] = [1 for _ in out["depths"]]
    for key, value in list(out.items()):
        if isinstance(value, list) and len(value) in old_counts and len(value) > MAX_LAYERS and key != "depths":
            out[key] = value[:MAX_LAYERS]
        elif isinstance(value, dict) and "model_type" in value and depth < 3:
            out[key] = shrink(value, depth + 1)
    return out


def small_config(model_type, class_name, shrunk=True):
    """The config class's defaults as a config.json would hold them (only what differs from
    PretrainedConfig's own defaults), with the layer counts cut unless shrunk is False."""
    from transformers import CONFIG_MAPPING

    config = CONFIG_MAPPING[model_type]()
    data = config.to_diff_dict()
    for key in LAYER_KEYS:
        value = getattr(config, key, None)
        if key not in data and isinstance(value, int) and not isinstance(value, bool):
            data[key] = value
    if shrunk:
        data = shrink(data)
    data["model_type"] = model_type
    data["architectures"] = [class_name]
    for key in ("transformers_version", "_name_or_path", "torch_dtype", "dtype"):
        data.pop(key, None)
    return data


def load_memory():
    for directory in MEMORY_PY_DIRS:
        if os.path.exists(os.path.join(directory, "memory.py")):
            sys.path.insert(0, os.path.abspath(directory))
            import memory

            return memory
    raise SystemExit("memory.py not found beside the bench")


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def one(job):
    """One (model type, task) in a worker process: build, trace, or fall back."""
    model_type, task, class_name, device, timeout = job
    memory = load_memory()
    row = {"modelType": model_type, "task": task, "class": class_name}
    started = time.time()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(timeout)
    try:
        try:
            data = small_config(model_type, class_name)
        except Exception as error:
            row.update(built=False, outcome="no-config", reason="%s: %s" % (type(error).__name__, memory.one_line(error)))
            return row
        request = {"mode": "trace", "source": {"kind": "config", "data": data, "path": model_type},
                   "task": "train", "amp": "bf16", "dtype": "float32", "optimizer": "adamw",
                   "gradCheckpointing": False, "lora": None, "evalStep": False, "batch": 2, "seqLen": 64,
                   "imageSize": None, "traceDevice": device}
        result = memory.run(request)
        if result.get("errorKind") == "config":
            # Cutting the layers broke this config (per-layer tables keyed by layer): the defaults.
            data = small_config(model_type, class_name, shrunk=False)
            request["source"]["data"] = data
            retry = memory.run(request)
            if retry.get("errorKind") != "config":
                result = retry
                row["fullSize"] = True
    except Timeout:
        result = {"status": "error", "errorKind": "timeout", "error": "no answer within %d s" % timeout}
    finally:
        signal.alarm(0)
    row["seconds"] = round(time.time() - started, 2)
    status = result.get("status")
    if status == "ok":
        row.update(built=True, outcome="traced", tier="trace", peakAllocatedBytes=result["peakAllocatedBytes"],
                   peakReservedBytes=(result.get("allocator") or {}).get("peakReservedBytes"),
                   parameterCount=result["parameterCount"], breakdown=result["breakdown"],
                   notes=[n for n in result.get("notes", []) if "workspace" not in n])
    elif status == "fallback":
        row.update(built=True, outcome="fell-back", tier="formula", reason=result.get("reason"),
                   parameterCount=result.get("parameterCount"), tail=(result.get("traceback") or "")[-600:])
    else:
        kind = result.get("errorKind")
        row.update(built=kind not in ("config",), outcome="failed" if kind != "config" else "not-built",
                   errorKind=kind, reason=result.get("error"), tail=(result.get("traceback") or "")[-600:])
    row["config"] = {k: v for k, v in (locals().get("data") or {}).items() if not isinstance(v, dict)} if row.get("tier") else None
    return row


def run(args):
    import transformers

    jobs = [p for p in pairs() if not args.only or p[0] in args.only.split(",")]
    if args.resume:
        # Rows an earlier run of the sweep finished are kept; only the rest run now.
        earlier = [json.loads(line) for line in open(args.resume) if line.strip()]
        # Traced and not-built rows stand; rows that fell back run again with this memory.py.
        finished = {(r["modelType"], r["task"]) for r in earlier if r.get("outcome") in ("traced", "not-built")}
        jobs = [p for p in jobs if (p[0], p[1]) not in finished]
    if args.limit:
        jobs = jobs[: args.limit]
    work = [(t, task, c, args.device, args.timeout) for t, task, c in jobs]
    started = time.time()
    context = multiprocessing.get_context("spawn")
    done = set()
    with open(args.out, "w") as out, context.Pool(args.workers, maxtasksperchild=args.per_child) as pool:
        out.write(json.dumps({"sweep": {"transformers": transformers.__version__, "pairs": len(work),
                                        "device": args.device, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}) + "\n")
        results = pool.imap_unordered(one, work, chunksize=1)
        while len(done) < len(work):
            try:
                row = results.next(timeout=max(1.0, args.budget - (time.time() - started)))
            except multiprocessing.TimeoutError:
                break
            done.add((row["modelType"], row["task"]))
            out.write(json.dumps(row, default=str) + "\n")
            out.flush()
            if len(done) % 25 == 0:
                sys.stderr.write("%d/%d %.0fs\n" % (len(done), len(work), time.time() - started))
        for model_type, task, class_name, _, _ in work:
            if (model_type, task) not in done:
                out.write(json.dumps({"modelType": model_type, "task": task, "class": class_name, "outcome": "not-run",
                                      "reason": "the sweep's %d s budget ran out first" % args.budget}) + "\n")
        pool.terminate()
    sys.stderr.write("done %d of %d pairs in %.0fs\n" % (len(done), len(work), time.time() - started))


def table(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    head = rows[0].get("sweep", {}) if rows and "sweep" in rows[0] else {}
    rows = [r for r in rows if "modelType" in r]
    counts = {}
    for row in rows:
        task = counts.setdefault(row["task"], {"pairs": 0, "built": 0, "traced": 0, "fell-back": 0, "failed": 0,
                                               "not-built": 0, "not-run": 0})
        task["pairs"] += 1
        task["built"] += 1 if row.get("built") else 0
        outcome = row.get("outcome")
        task[outcome if outcome in task else "not-built"] += 1
    keys = ("pairs", "built", "traced", "fell-back", "failed", "not-built", "not-run")
    lines = ["| task | pairs | built | traced | fell back (formula tier) | failed | not built | not run |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    total = dict.fromkeys(keys, 0)
    for task, c in counts.items():
        lines.append("| %s | %s |" % (task, " | ".join(str(c[k]) for k in keys)))
        for key in total:
            total[key] += c[key]
    lines.append("| all | %s |" % " | ".join(str(total[k]) for k in keys))
    lines += ["", "| model type | task | class | outcome | tier | why (one line) |", "| --- | --- | --- | --- | --- | --- |"]
    for row in sorted(rows, key=lambda r: (r["modelType"], r["task"])):
        reason = (row.get("reason") or "; ".join(row.get("notes") or []) or "").replace("|", "/").replace("\n", " ")[:160]
        lines.append("| %s | %s | %s | %s | %s | %s |" % (row["modelType"], row["task"], row["class"], row.get("outcome"),
                                                      row.get("tier") or "-", reason))
    print("sweep of transformers %s on %s, %d pairs\n" % (head.get("transformers"), head.get("device"), len(rows)))
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--table")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--only")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--per-child", type=int, default=20)
    parser.add_argument("--resume", help="an earlier sweep's rows: run only the pairs it did not finish")
    parser.add_argument("--budget", type=float, default=1e9, help="seconds; pairs not done by then are listed as not run")
    args = parser.parse_args()
    if args.table:
        table(args.table)
    else:
        run(args)


if __name__ == "__main__":
    main()
