# gpuprep validate: a model built from its config (no weights) and timed training steps, for MFU.
# validate.py inlines this file's text (scripts/inline-python.mjs) and runs it in its "mfu" child.
#
# The model is built the way gpuprep memory builds one (src/memory/memory.py: transformers'
# AutoConfig.for_model + the config's architectures class, or AutoModelForCausalLM), once on the
# meta device to count the matmul weights, once on the real device to train. Kept apart so that
# memory and validate can later share one builder.
#
# Only the standard library at the top level; torch and transformers are imported by the caller.
import json
import os
import time


class StepError(Exception):
    """A failure with the part that failed: config, no-transformers, oom, step."""

    def __init__(self, kind, message):
        Exception.__init__(self, message)
        self.kind = kind


def read_config(path):
    """config.json of a model directory, or the named .json file."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        raise StepError("config", "cannot read %s: %s" % (path, error))
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise StepError("config", "%s has no \"model_type\": not a Hugging Face config.json" % path)
    return data


def model_class(transformers, data):
    for name in data.get("architectures") or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    return transformers.AutoModelForCausalLM


def build(torch, data, device):
    """(model, config) built from the config's fields on `device` ("meta" counts without memory)."""
    try:
        import transformers
    except Exception as error:
        raise StepError("no-transformers", "transformers does not import here (%s: %s)" % (type(error).__name__, error))
    fields = dict(data)
    model_type = fields.pop("model_type")
    try:
        config = transformers.AutoConfig.for_model(model_type, **fields)
    except Exception as error:
        raise StepError("config", "transformers %s cannot read model_type %r: %s" % (
            transformers.__version__, model_type, error))
    cls = model_class(transformers, data)
    with torch.device(device):
        # _from_config honours the attention implementation as from_pretrained does (SDPA where
        # the model supports it); the Auto* classes only have from_config.
        make = getattr(cls, "_from_config", None) or cls.from_config
        model = make(config)
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False  # what training loops set
    return model, model.config


def matmul_weights(torch, model):
    """Elements of every nn.Linear weight (the output head included, tied or not): the N of 6N."""
    total = 0
    seen = set()
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            # A tied head is the embedding's tensor, but it is a matmul all the same: count it per use.
            key = (id(module), id(module.weight))
            if key not in seen:
                seen.add(key)
                total += module.weight.numel()
    return total


def attention_shape(config):
    """(layers, heads x head dim) from the config; None where it does not say."""
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None)
    hidden = getattr(config, "hidden_size", None) or getattr(config, "n_embd", None)
    head_dim = getattr(config, "head_dim", None) or (hidden // heads if hidden and heads else None)
    if not layers or not heads or not head_dim:
        return None
    return int(layers), int(heads) * int(head_dim), int(heads), int(head_dim)


def flops_per_token(weights, shape, seq):
    """Training FLOPs per token (forward + backward), as PaLM (Chowdhery et al. 2022, appendix B)
    counts them: 6 N for the matmul weights plus 12 L (H Q) T for attention scores and values at
    sequence length T. Causal masking is not discounted, the usual convention for MFU."""
    attention = 12 * shape[0] * shape[1] * seq if shape else 0
    return 6 * weights + attention


def step_inputs(torch, config, batch, seq, device):
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    return {"input_ids": ids, "labels": ids}


def loss_of(output):
    loss = output.loss if hasattr(output, "loss") else output[0]
    if loss is None:
        raise StepError("step", "the model returned no loss (not a causal LM head?)")
    return loss


def train_steps(torch, model, inputs, options, device_type, timer):
    """Warm-up steps, then timed ones: forward and backward under bf16 autocast, AdamW step."""
    params = [p for p in model.parameters() if p.requires_grad]
    try:
        optimizer = torch.optim.AdamW(params, lr=1e-5, fused=device_type == "cuda")
    except (TypeError, RuntimeError):
        optimizer = torch.optim.AdamW(params, lr=1e-5)
    losses = []

    def step():
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
            loss = loss_of(model(**inputs))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for _ in range(int(options.get("warmup", 3))):
        losses.append(float(step().detach()))
    times = timer(step, int(options.get("steps", 10)), float(options.get("budgetSeconds", 20)))
    return times, losses, step


def run(torch, options, device, timer, capture_kernels):
    """The mfu child's work; returns a JSON-able dict (raises StepError with the failing part)."""
    data = read_config(options["path"])
    with_meta = build(torch, data, "meta")[0]
    weights = matmul_weights(torch, with_meta)
    all_params = sum(p.numel() for p in with_meta.parameters())
    del with_meta
    started = time.perf_counter()
    model, config = build(torch, data, device)
    model.train()
    build_seconds = time.perf_counter() - started
    max_positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    seq = int(options.get("seqLen") or min(2048, int(max_positions or 2048)))
    batch = int(options.get("batch") or 8)
    shape = attention_shape(config)
    inputs = step_inputs(torch, config, batch, seq, device)
    device_type = "cuda" if str(device).startswith("cuda") else "cpu"
    result = {
        "path": options["path"],
        "modelType": data.get("model_type"),
        "modelClass": type(model).__name__,
        "attnImplementation": getattr(config, "_attn_implementation", None),
        "parameters": int(all_params),
        "matmulWeights": int(weights),
        "layers": shape[0] if shape else None,
        "heads": shape[2] if shape else None,
        "headDim": shape[3] if shape else None,
        "seqLen": seq,
        "batch": batch,
        "tokensPerStep": batch * seq,
        "flopsPerToken": flops_per_token(weights, shape, seq),
        "autocast": "bfloat16",
        "buildSeconds": round(build_seconds, 3),
    }
    times, losses, step = train_steps(torch, model, inputs, options, device_type, timer)
    ordered = sorted(times)
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    result.update({
        "steps": len(times),
        "stepMs": [round(t, 3) for t in times],
        "medianStepMs": median,
        "tokensPerSecond": batch * seq / (median / 1000.0),
        "losses": [round(loss, 4) for loss in losses],
        "lossFinite": all(loss == loss and abs(loss) != float("inf") for loss in losses),
    })
    result["achievedTflops"] = result["flopsPerToken"] * result["tokensPerSecond"] / 1e12
    if device_type == "cuda":
        result["peakMemoryBytes"] = int(torch.cuda.max_memory_allocated())
    # Which kernels one step ran (attention backend, GEMM library), after the timing.
    result["kernels"] = capture_kernels(lambda: step())
    return result
