"""Which tensors autograd saves for backward: one real CUDA forward beside the trace tier's fake one.

Why: on the H100 the trace tier over-estimated the Llama- and Qwen-shaped cells by about 200 and
100 MiB per sample once activations set the peak (docs/benchmarks.md, issue 13), while GPT-2 was
within 1.4 %. The difference is in what the forward keeps for backward, and this lists it: every
saved tensor (deduplicated by storage) of one forward under bf16 autocast, grouped by shape and
dtype, real and fake side by side, and the groups that differ.

Run on a GPU machine with torch and transformers (no Node needed):
    python3 bench/memory/saved-tensors.py --model llama --layers 2 --batch 4 --seq-len 1024
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "memory"))
import memory  # noqa: E402

CONFIGS = {
    # The bench's shapes (bench/memory/accuracy.py), with fewer layers: the per-layer difference is
    # what is looked for.
    "llama": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
              "intermediate_size": 5632, "num_attention_heads": 32, "num_key_value_heads": 4,
              "vocab_size": 32000, "max_position_embeddings": 2048},
    "qwen2": {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896,
              "intermediate_size": 4864, "num_attention_heads": 14, "num_key_value_heads": 2,
              "vocab_size": 151936, "tie_word_embeddings": True, "max_position_embeddings": 4096},
    "gpt2": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]},
}


def saved_groups(torch, request, device, fake):
    from torch.multiprocessing.reductions import StorageWeakRef

    seen = {}

    def pack(tensor):
        key = StorageWeakRef(tensor.untyped_storage())
        if key not in seen:
            seen[key] = (tuple(tensor.shape), str(tensor.dtype).replace("torch.", ""),
                         tensor.untyped_storage().nbytes())
        return tensor

    model, make_inputs, _optimizer, _notes, _counts = memory.prepare(torch, request, device, real=not fake)
    model.train()
    inputs, _ = make_inputs(int(request["batch"]))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with memory.autocast(torch, request, device):
            loss = memory.loss_of(torch, memory.call_model(model, inputs))
    groups = collections.Counter()
    sizes = collections.Counter()
    for shape, dtype, nbytes in seen.values():
        groups[(shape, dtype)] += 1
        sizes[(shape, dtype)] += nbytes
    del loss
    return groups, sizes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(CONFIGS), default="llama")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--task", default="train")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script on a machine without a GPU")
    args = parser.parse_args()
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    config = dict(CONFIGS[args.model])
    config["n_layer" if args.model == "gpt2" else "num_hidden_layers"] = args.layers
    path = "/tmp/gpuprep-saved-tensors-%s.json" % args.model
    with open(path, "w") as handle:
        json.dump(config, handle)
    request = {"source": {"kind": "config", "path": path}, "task": args.task, "amp": "bf16",
               "batch": args.batch, "seqLen": args.seq_len, "optimizer": "adamw",
               "lora": {"rank": 16, "alpha": 32, "targets": ["q_proj", "v_proj"]} if args.task == "finetune-lora" else None}
    real_groups, real_sizes = saved_groups(torch, request, args.device, fake=False)
    with FakeTensorMode(), memory.unpacked_masks(request):
        fake_groups, fake_sizes = saved_groups(torch, dict(request, fake=True), args.device, fake=True)
    mib = 1024.0 * 1024.0
    print("%s, %d layers, batch %d, seq %d, %s: saved for backward (unique storages)" % (
        args.model, args.layers, args.batch, args.seq_len, args.task))
    print("real %.1f MiB, fake %.1f MiB" % (sum(real_sizes.values()) / mib, sum(fake_sizes.values()) / mib))
    print("%-36s %-9s %6s %6s %10s %10s" % ("shape", "dtype", "n real", "n fake", "MiB real", "MiB fake"))
    for key in sorted(set(real_groups) | set(fake_groups), key=lambda k: -(fake_sizes[k] - real_sizes[k])):
        if real_groups[key] == fake_groups[key] and real_sizes[key] == fake_sizes[key]:
            continue
        print("%-36s %-9s %6d %6d %10.1f %10.1f" % (str(key[0]), key[1], real_groups[key], fake_groups[key],
                                                   real_sizes[key] / mib, fake_sizes[key] / mib))


if __name__ == "__main__":
    main()
