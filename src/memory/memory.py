"""gpuprep memory payload: run by the TARGET interpreter with one JSON request as argv[1].

Modes:
  trace  build the model on fake tensors (no weights, no memory) and run one full training step
         (forward, backward, optimizer step; plus an eval step when asked) under torch's
         MemTracker; return the peak and what held it, in bytes.
  trial  build the real model with random weights on CUDA and run N real steps; return the
         allocator's peaks, device-level use, the median step time, or status "oom".

The result is printed as ONE line, the payload frame "@gpuprep-frame <nonce> memory <json>" of
src/probe/frame.py, on the real stdout; everything else (the user's factory, transformers'
warnings) is sent to stderr, so no stray print can pass for the result. stdlib only at import time
(torch is imported inside), Python >= 3.8.
"""
import contextlib
import importlib
import json
import os
import sys
import time
import traceback

SCHEMA = "gpuprep.memory.payload"
SCHEMA_VERSION = 1
# The payload frame and the table of error kinds (src/probe/frame.py, payload-errors.json),
# shared with the probe and validate; the build puts their text here.
FRAME_SOURCE = None  # @inline ../probe/frame.py
FRAME = {"__name__": "gpuprep_frame"}
exec(compile(FRAME_SOURCE or "", "frame.py", "exec"), FRAME)
ERROR_KINDS_SOURCE = None  # @inline ../probe/payload-errors.json
ERROR_KINDS = json.loads(ERROR_KINDS_SOURCE or '{"kinds": {}}')["kinds"]
# MemTracker (torch.distributed._tools.mem_tracker) first shipped in torch 2.5.
TRACE_TORCH_NEEDED = "torch >= 2.5 (torch.distributed._tools.mem_tracker)"


class PayloadError(Exception):
    """A failure the user can act on: one line, reported as status "error" with this kind."""

    def __init__(self, kind, message):
        Exception.__init__(self, message)
        # Every kind is in payload-errors.json, which gpuprep reads too; a new one goes there first.
        self.kind = kind if kind in ERROR_KINDS else "internal"


def main():
    nonce = FRAME["take_nonce"](globals())  # first, before the user's code is imported
    real_stdout = sys.stdout
    # Anything printed while we work (a factory, a library banner) goes to stderr.
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    except ValueError as error:
        request = {}
        result = {"status": "error", "errorKind": "request", "error": "bad request: %s" % error}
    else:
        result = run(request)
    result.update({"schema": SCHEMA, "schemaVersion": SCHEMA_VERSION, "mode": request.get("mode")})
    result["python"] = {"executable": sys.executable, "version": sys.version.split()[0]}
    real_stdout.flush()
    FRAME["emit"](nonce, "memory", result)


def run(request):
    started = time.time()
    mode = request.get("mode")
    try:
        if mode == "pid":  # seed 001's rule from a running process: no torch needed
            return dict(pid_memory(int(request.get("pid") or 0)), seconds=round(time.time() - started, 3))
        torch = import_torch()
        if mode == "trace":
            result = trace(torch, request)
        elif mode == "trial":
            result = trial(torch, request)
        else:
            raise PayloadError("request", "unknown mode %r" % (mode,))
    except PayloadError as error:
        result = {"status": "error", "errorKind": error.kind, "error": str(error)}
    except Exception as error:  # a bug of ours or of the model code: one line plus the tail
        result = {
            "status": "error",
            "errorKind": "internal",
            "error": "%s: %s" % (type(error).__name__, one_line(error)),
            "traceback": traceback.format_exc()[-4000:],
        }
    result["seconds"] = round(time.time() - started, 3)
    return result


def one_line(error):
    text = str(error).strip().splitlines()
    return text[0][:500] if text else ""


def import_torch():
    try:
        import torch
    except Exception as error:
        raise PayloadError("no-torch", "torch does not import here (%s)" % one_line(error))
    return torch


def torch_info(torch):
    return {"version": torch.__version__, "cuda": getattr(torch.version, "cuda", None)}


# ---------------------------------------------------------------- the model and its inputs


def build_model(torch, request, device, real):
    """The model on `device`, plus make_inputs(batch) -> (kwargs, loss_fn) and what was done."""
    source = request["source"]
    notes = []
    dtype = getattr(torch, request.get("dtype") or "float32")
    # Built in the weights' dtype (default dtype), since fake tensors cannot be converted in place.
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        if source["kind"] == "factory":
            model, make_inputs = from_factory(torch, source, request, device, notes)
        else:
            # The CLI sends the config's contents (it may run on another host); the bench sends a path.
            data = source.get("data") if isinstance(source.get("data"), dict) else read_config(source["path"])
            model, make_inputs = from_config(torch, data, source.get("path") or "the config", request, device, real, notes)
    finally:
        torch.set_default_dtype(saved)
    if real and any(p.is_floating_point() and p.dtype != dtype for p in model.parameters()):
        model = model.to(dtype)
    return model, make_inputs, notes


def with_no_init(torch, fake):
    """On fake tensors random init must not run: CPU builds cannot draw random numbers for 'cuda'."""
    stack = contextlib.ExitStack()
    if not fake:
        return stack
    import torch.nn.init as init

    def keep(tensor, *args, **kwargs):
        return tensor

    for name in (
        "uniform_", "normal_", "trunc_normal_", "kaiming_uniform_", "kaiming_normal_",
        "xavier_uniform_", "xavier_normal_", "orthogonal_", "constant_", "zeros_", "ones_",
    ):
        if hasattr(init, name):
            saved = getattr(init, name)
            setattr(init, name, keep)
            stack.callback(setattr, init, name, saved)
    # transformers 5 keeps its own references to torch's init functions.
    table = getattr(sys.modules.get("transformers.initialization"), "TORCH_INIT_FUNCTIONS", None)
    if table is None:
        try:
            from transformers.initialization import TORCH_INIT_FUNCTIONS as table
        except Exception:
            table = None
    if isinstance(table, dict):
        for name in list(table):
            saved = table[name]
            table[name] = keep
            stack.callback(table.__setitem__, name, saved)
    no_init_weights = None
    for where in ("transformers.initialization", "transformers.modeling_utils"):
        try:
            no_init_weights = getattr(importlib.import_module(where), "no_init_weights", None)
        except Exception:
            continue
        if no_init_weights is not None:
            break
    if no_init_weights is not None:
        stack.enter_context(no_init_weights())
    return stack


def from_factory(torch, source, request, device, notes):
    spec = source["spec"]
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise PayloadError("factory", "--factory %s is not module:function" % spec)
    if source.get("cwd"):
        sys.path.insert(0, source["cwd"])
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise PayloadError("factory", "cannot import %s: %s: %s" % (module_name, type(error).__name__, one_line(error)))
    factory = getattr(module, function_name, None)
    if not callable(factory):
        raise PayloadError("factory", "%s has no function %s" % (module_name, function_name))
    try:
        with device_context(torch, device), with_no_init(torch, request.get("fake", False)):
            built = factory()
    except Exception as error:
        raise PayloadError("factory", "%s raised %s: %s" % (spec, type(error).__name__, one_line(error)))
    make_inputs = None
    if isinstance(built, tuple) and len(built) == 2:
        built, make_inputs = built
    if not isinstance(built, torch.nn.Module):
        raise PayloadError("factory", "%s returned %s, not a torch.nn.Module" % (spec, type(built).__name__))
    if make_inputs is None:
        if getattr(built, "config", None) is not None and hasattr(built, "main_input_name"):
            return moved(built, device), hf_inputs(torch, built, request, device)
        raise PayloadError(
            "factory",
            "%s returned a model but no inputs: return (model, make_inputs) with make_inputs(batch, device)" % spec,
        )
    notes.append("inputs from the factory's make_inputs")

    def user_inputs(batch):
        return make_inputs(batch, device), None

    return moved(built, device), user_inputs


def moved(model, device):
    """The model on `device`; .to() only where needed: fake tensors cannot be swapped in place."""
    tensors = list(model.parameters()) + list(model.buffers())
    if all(t.device.type == device for t in tensors):
        return model
    return model.to(device)


def read_config(path):
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        raise PayloadError("config", "cannot read %s: %s" % (path, one_line(error)))
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise PayloadError("config", "%s has no \"model_type\": not a Hugging Face config.json" % path)
    return data


def from_config(torch, data, path, request, device, real, notes):
    if not isinstance(data.get("model_type"), str):
        raise PayloadError("config", "%s has no \"model_type\": not a Hugging Face config.json" % path)
    try:
        import transformers
    except Exception as error:
        raise PayloadError("no-transformers", "transformers does not import here (%s)" % one_line(error))
    fields = dict(data)
    model_type = fields.pop("model_type")
    try:
        config = transformers.AutoConfig.for_model(model_type, **fields)
    except Exception as error:
        raise PayloadError("config", "transformers %s cannot read model_type %r: %s" % (
            transformers.__version__, model_type, one_line(error)))
    cls = None
    for name in data.get("architectures") or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            break
    if cls is None:
        cls = transformers.AutoModelForCausalLM if request.get("task") != "infer" else transformers.AutoModel
        notes.append("no usable \"architectures\" in the config: built with %s" % cls.__name__)
    try:
        # transformers picks SDPA attention where the model supports it, as from_pretrained does.
        with device_context(torch, device), with_no_init(torch, not real):
            # Model classes build through _from_config (it honours the attention implementation
            # as from_pretrained does); the Auto* fallbacks only have from_config.
            build = getattr(cls, "_from_config", None) or cls.from_config
            model = build(config)
            if hasattr(model, "tie_weights"):
                model.tie_weights()  # skipped init leaves tied embeddings untied (twice the memory)
    except PayloadError:
        raise
    except Exception as error:
        raise PayloadError("config", "%s could not be built from %s: %s: %s" % (
            cls.__name__, path, type(error).__name__, one_line(error)))
    if hasattr(model.config, "use_cache") and request.get("task") != "infer":
        model.config.use_cache = False  # what training loops set; a KV cache is not kept for backward
    return model, hf_inputs(torch, model, request, device)


def device_context(torch, device):
    return torch.device(device) if hasattr(torch.device(device), "__enter__") else contextlib.ExitStack()


def hf_inputs(torch, model, request, device):
    """A batch for a transformers model, chosen from its main input and architecture."""
    config = model.config
    seq = int(request.get("seqLen") or 512)
    name = type(model).__name__
    main_input = getattr(model, "main_input_name", "input_ids")
    vocab = int(getattr(config, "vocab_size", 0) or 1000)
    num_labels = int(getattr(config, "num_labels", 2) or 2)

    def make(batch):
        if main_input == "pixel_values":
            size = int(request.get("imageSize") or getattr(config, "image_size", 224) or 224)
            channels = int(getattr(config, "num_channels", 3) or 3)
            kwargs = {"pixel_values": torch.randn(batch, channels, size, size, device=device)}
            if "ImageClassification" in name:
                kwargs["labels"] = torch.randint(0, num_labels, (batch,), device=device)
            return kwargs, None
        ids = torch.randint(0, vocab, (batch, seq), device=device)
        kwargs = {"input_ids": ids}
        if getattr(config, "is_encoder_decoder", False):
            kwargs["labels"] = torch.randint(0, vocab, (batch, seq), device=device)
        elif "SequenceClassification" in name:
            kwargs["labels"] = torch.randint(0, num_labels, (batch,), device=device)
        elif "CausalLM" in name or "LMHead" in name or "MaskedLM" in name or "PreTraining" in name:
            kwargs["labels"] = ids
        return kwargs, None

    return make


def loss_of(torch, output):
    loss = getattr(output, "loss", None)
    if loss is None and isinstance(output, dict):
        loss = output.get("loss")
    if loss is None:
        first = output
        if isinstance(output, (tuple, list)):
            first = output[0]
        elif not isinstance(output, torch.Tensor) and hasattr(output, "to_tuple"):
            first = output.to_tuple()[0]
        loss = first.float().mean()
    return loss


def call_model(model, inputs):
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


# ---------------------------------------------------------------- LoRA and checkpointing


def apply_lora(torch, model, lora, real, notes):
    """Minimal LoRA: Linear layers whose name ends with a target get A (r x in) and B (out x r)."""
    nn = torch.nn
    targets = lora.get("targets") or []
    rank = int(lora["rank"])
    scale = float(lora.get("alpha", 2 * rank)) / rank

    class LoraLinear(nn.Module):
        def __init__(self, base):
            nn.Module.__init__(self)
            self.base = base
            w = base.weight
            self.lora_a = nn.Parameter(torch.empty(rank, base.in_features, dtype=w.dtype, device=w.device))
            self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank, dtype=w.dtype, device=w.device))
            if real:
                nn.init.kaiming_uniform_(self.lora_a, a=5 ** 0.5)

        def forward(self, x):
            return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * scale

    for parameter in model.parameters():
        parameter.requires_grad_(False)
    replaced = []
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = "%s.%s" % (name, child_name) if name else child_name
            if not isinstance(child, nn.Linear):
                continue
            if targets and not any(full == t or full.endswith("." + t) for t in targets):
                continue
            if not targets and child_name in ("lm_head", "classifier", "score"):
                continue
            setattr(module, child_name, LoraLinear(child))
            replaced.append(full)
    if not replaced:
        raise PayloadError("lora", "no Linear layer matches --lora-targets %s" % ",".join(targets))
    notes.append("LoRA r=%d on %d Linear layers (gpuprep's own adapters)" % (rank, len(replaced)))


def enable_checkpointing(torch, model, notes):
    if hasattr(model, "gradient_checkpointing_enable") and getattr(model, "supports_gradient_checkpointing", True):
        try:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        except TypeError:
            model.gradient_checkpointing_enable()
        notes.append("gradient checkpointing: transformers' gradient_checkpointing_enable()")
        return
    # A plain module: checkpoint every block of its longest ModuleList (the layer stack).
    from torch.utils.checkpoint import checkpoint

    lists = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) > 0]
    if not lists:
        raise PayloadError("checkpointing", "the model has no ModuleList of blocks to checkpoint")
    name, blocks = max(lists, key=lambda item: len(item[1]))

    def wrap(block):
        forward = block.forward

        def checkpointed(*args, **kwargs):
            if not torch.is_grad_enabled():
                return forward(*args, **kwargs)
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)

        block.forward = checkpointed

    for block in blocks:
        wrap(block)
    notes.append("gradient checkpointing: torch.utils.checkpoint around the %d blocks of %s" % (len(blocks), name or "model"))


# ---------------------------------------------------------------- optimizer


def make_optimizer(torch, request, parameters, fake, device):
    name = request.get("optimizer") or "adamw"
    lr = 1e-4
    # On CUDA torch defaults to the foreach kernels (whole-group temporaries); it cannot tell that
    # fake tensors are on CUDA and would fall back to the per-tensor loop, so say it for them.
    extra = {"foreach": True} if fake and device == "cuda" else {}
    if name == "adamw":
        return torch.optim.AdamW(parameters, lr=lr, **extra)
    if name == "sgd":
        return torch.optim.SGD(parameters, lr=lr, momentum=0.9, **extra)
    if name == "adafactor":
        if hasattr(torch.optim, "Adafactor"):
            return torch.optim.Adafactor(parameters, lr=lr, **extra)
        try:
            from transformers.optimization import Adafactor
        except Exception:
            raise PayloadError("unsupported", "adafactor needs torch >= 2.5 or transformers here")
        return Adafactor(parameters, lr=lr, relative_step=False, scale_parameter=False)
    if name == "adamw8bit":
        if fake:
            raise PayloadError("unsupported", "adamw8bit's bitsandbytes kernels cannot run on fake tensors: "
                               "use --measure on the GPU, or the formula tier")
        try:
            import bitsandbytes
        except Exception as error:
            raise PayloadError("unsupported", "adamw8bit needs bitsandbytes, which does not import here (%s)" % one_line(error))
        return bitsandbytes.optim.AdamW8bit(parameters, lr=lr)
    raise PayloadError("request", "unknown optimizer %r" % name)


def prepare(torch, request, device, real):
    """Model, inputs, optimizer and notes, set up for the work asked."""
    task = request.get("task") or "train"
    if task == "finetune-qlora":
        raise PayloadError("unsupported", "finetune-qlora needs bitsandbytes' 4-bit layers; gpuprep does not "
                           "trace or run them yet (use --task finetune-lora for the adapter part)")
    model, make_inputs, notes = build_model(torch, request, device, real)
    if request.get("lora") and task == "finetune-lora":
        apply_lora(torch, model, request["lora"], real, notes)
    if request.get("gradCheckpointing") and task != "infer":
        enable_checkpointing(torch, model, notes)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = None
    if task != "infer":
        if not trainable:
            raise PayloadError("request", "the model has no trainable parameters")
        optimizer = make_optimizer(torch, request, trainable, not real, device)
    counts = {
        "parameterCount": sum(p.numel() for p in model.parameters()),
        "trainableParameterCount": sum(p.numel() for p in trainable) if task != "infer" else 0,
    }
    return model, make_inputs, optimizer, notes, counts


def autocast(torch, request, device_type):
    amp = request.get("amp")
    if not amp:
        return contextlib.ExitStack()
    return torch.autocast(device_type, dtype=torch.bfloat16 if amp == "bf16" else torch.float16)


def train_step(torch, request, model, make_inputs, optimizer, batch, device_type):
    inputs, _ = make_inputs(batch)
    with autocast(torch, request, device_type):
        output = call_model(model, inputs)
        loss = loss_of(torch, output)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def eval_step(torch, request, model, make_inputs, batch, device_type):
    model.eval()
    with torch.no_grad():
        inputs, _ = make_inputs(batch)
        with autocast(torch, request, device_type):
            call_model(model, inputs)
    model.train()


# ---------------------------------------------------------------- trace tier


@contextlib.contextmanager
def unpacked_masks(request):
    """transformers reads a fake tensor as "being traced" and then never concludes that a batch is
    unpacked: find_packed_sequence_indices keeps a packed-sequence mask, the causal-mask skip is
    refused, a boolean mask is materialised, and SDPA loses its native GQA path (repeat_kv expands
    K and V, which backward then keeps). On the real GPU the same batch gives None and flash
    attention with GQA: the trace over-counted Llama- and Qwen-shaped models by about 200 and 100
    MiB per sample (bench/memory/saved-tensors.py shows the saved tensors on both sides). The
    batches gpuprep builds from a config are never packed (positions 0..n-1), so the trace is told
    the answer the real run computes. A user's factory builds its own inputs: left alone."""
    patched = None
    if request["source"].get("kind") != "factory":
        try:
            import transformers.masking_utils as masking_utils
        except Exception:
            masking_utils = None
        if masking_utils is not None and hasattr(masking_utils, "find_packed_sequence_indices"):
            patched = (masking_utils, masking_utils.find_packed_sequence_indices)
            masking_utils.find_packed_sequence_indices = lambda *args, **kwargs: None
    try:
        yield
    finally:
        if patched is not None:
            patched[0].find_packed_sequence_indices = patched[1]



def trace(torch, request):
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.distributed._tools.mem_tracker import MemTracker
    except Exception as error:
        return {
            "status": "unsupported",
            "torch": torch_info(torch),
            "error": "the trace tier needs %s; this torch is %s (%s)" % (
                TRACE_TORCH_NEEDED, torch.__version__, one_line(error)),
        }
    # Fake CUDA tensors need a CUDA build (the forward's device guard aborts on CPU builds), so a
    # CPU-only torch traces on fake CPU tensors: CPU kernels, whose attention keeps more.
    wanted = request.get("traceDevice") or "auto"
    cuda_ok = torch.cuda.is_available()
    device = "cuda" if (wanted == "cuda" or (wanted == "auto" and cuda_ok)) else "cpu"
    if device == "cuda" and not cuda_ok and not torch.backends.cuda.is_built():
        raise PayloadError("unsupported", "this torch has no CUDA: trace with traceDevice cpu")
    batch = int(request.get("batch") or 1)
    task = request.get("task") or "train"
    with FakeTensorMode(), unpacked_masks(request):
        request = dict(request, fake=True)
        model, make_inputs, optimizer, notes, counts = prepare(torch, request, device, real=False)
        model.train()
        if optimizer is not None:
            materialize_optimizer_state(torch, optimizer)
        tracker = MemTracker()
        skip_grad_hooks(tracker, model)
        tracker.track_external(model, *([optimizer] if optimizer is not None else []))
        with tracker:
            if task == "infer":
                eval_step(torch, request, model, make_inputs, batch, device)
            else:
                train_step(torch, request, model, make_inputs, optimizer, batch, device)
                if request.get("evalStep"):
                    tracker.reset_mod_stats()  # keeps the peak; lets the modules run again
                    eval_step(torch, request, model, make_inputs, batch, device)
        snapshot = tracker.get_tracker_snapshot("peak")
    per_device = None
    for key, value in snapshot.items():
        if str(key).startswith(device):
            per_device = value
    if per_device is None:
        raise PayloadError("internal", "the tracker saw no memory on %s" % device)
    parts = {}
    for key, value in per_device.items():
        parts[getattr(key, "name", str(key))] = int(value)
    breakdown = {
        "parameters": parts.get("PARAM", 0) + parts.get("BUFFER", 0),
        "gradients": parts.get("GRAD", 0),
        "optimizerState": parts.get("OPT", 0),
        "activations": parts.get("ACT", 0),
        "temporaries": parts.get("TEMP", 0) + parts.get("OTH", 0),
    }
    peak = int(parts.get("Total", sum(breakdown.values())))
    workspaces = 0
    if device == "cpu":
        notes.append("traced on fake CPU tensors (this torch has no CUDA): CPU attention kernels keep "
                     "more than CUDA's, so the figure leans high")
    else:
        workspaces = cublas_workspace_bytes(torch, task)
        breakdown["temporaries"] += workspaces
        notes.append("cuBLAS/cuBLASLt workspaces: %.0f MiB (allocated by real matmuls, not by fake tensors)"
                     % (workspaces / 1048576.0))
    result = {
        "status": "ok",
        "torch": torch_info(torch),
        "traceDevice": device,
        "batch": batch,
        "trackerPeakBytes": peak,
        "peakAllocatedBytes": peak + workspaces,
        "breakdown": breakdown,
        "notes": notes,
    }
    result.update(counts)
    return result


def cublas_workspace_bytes(torch, task):
    """The cuBLAS and cuBLASLt workspaces a real step allocates, which fake tensors never do.

    torch takes one workspace per (cuBLAS handle, stream) from its caching allocator, so it counts
    in max_memory_allocated, and handles are per thread: training uses two (the forward's thread
    and autograd's device thread), inference one. Sizes from aten/src/ATen/cuda/CublasHandlePool.cpp
    (pytorch/pytorch@26a39059ec580351411f180816c47e2ef5134ae1, parseChosenWorkspaceSize and
    parseCUDABlasLtWorkspaceSize): CUBLAS_WORKSPACE_CONFIG ":SIZE_KiB:COUNT" pairs, else 32 MiB on
    sm_90 and 4096 KiB x 2 + 16 KiB x 8 elsewhere; cuBLASLt CUBLASLT_WORKSPACE_SIZE KiB, else 1 MiB.
    On the H100 the trace fell short by 64-68 MiB on cells whose peak is not activation-bound."""
    import re

    config = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    pairs = re.findall(r":([0-9]+):([0-9]+)", config or "")
    if pairs:
        blas = sum(int(size) * 1024 * int(count) for size, count in pairs)
    else:
        capability = torch.cuda.get_device_capability() if torch.cuda.is_available() else None
        blas = 4096 * 8 * 1024 if capability == (9, 0) else 4096 * 1024 * 2 + 16 * 1024 * 8
    lt_kib = os.environ.get("CUBLASLT_WORKSPACE_SIZE", "")
    lt = int(lt_kib) * 1024 if lt_kib.isdigit() else 1024 * 1024
    threads = 1 if task == "infer" else 2
    return threads * (blas + lt)


class _NoHook(object):
    def remove(self):
        pass


def skip_grad_hooks(tracker, model):
    """MemTracker hooks every parameter's gradient, which raises on frozen ones (LoRA): mark them done."""
    handles = getattr(tracker, "_param_to_grad_hook_handles", None)
    if handles is None:
        return
    for parameter in model.parameters():
        if not parameter.requires_grad:
            handles[parameter] = (_NoHook(), _NoHook())


def materialize_optimizer_state(torch, optimizer):
    """Create the optimizer's state before tracing, so one traced step is a steady-state step."""
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


# ---------------------------------------------------------------- measured trial


def is_oom(torch, error):
    oom_type = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom_type is not None and isinstance(error, oom_type)) or "out of memory" in str(error).lower()


def trial(torch, request):
    device = request.get("device") or "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        reason = "this torch has no CUDA build" if not torch.backends.cuda.is_built() else "no CUDA GPU is visible"
        raise PayloadError("no-cuda", "--measure needs a CUDA GPU: %s (torch %s)" % (reason, torch.__version__))
    batch = int(request.get("batch") or 1)
    steps = max(1, int(request.get("steps") or 3))
    task = request.get("task") or "train"
    result = {"status": "ok", "torch": torch_info(torch), "batch": batch, "steps": steps, "error": None}
    times = []
    model = None
    try:
        model, make_inputs, optimizer, notes, counts = prepare(torch, request, device, real=True)
        result.update(counts)
        result["notes"] = notes
        model.train()
        for _ in range(steps):
            sync(torch, device)
            start = time.perf_counter()
            if task == "infer":
                eval_step(torch, request, model, make_inputs, batch, device)
            else:
                train_step(torch, request, model, make_inputs, optimizer, batch, device)
            sync(torch, device)
            times.append((time.perf_counter() - start) * 1000.0)
        if request.get("evalStep") and task != "infer":
            eval_step(torch, request, model, make_inputs, batch, device)
            sync(torch, device)
    except PayloadError:
        raise
    except Exception as error:
        if not is_oom(torch, error):
            raise
        result["status"] = "oom"
        result["error"] = one_line(error)
    times.sort()
    result["stepMs"] = round(times[len(times) // 2], 3) if times else None
    if device == "cuda":
        result["peakAllocatedBytes"] = int(torch.cuda.max_memory_allocated())
        result["peakReservedBytes"] = int(torch.cuda.max_memory_reserved())
        free, total = torch.cuda.mem_get_info()
        result["deviceUsedBytes"] = int(total - free)
        result["deviceTotalBytes"] = int(total)
        result["device"] = torch.cuda.get_device_name(0)
        result["processUsedBytes"] = process_used_bytes()
    else:
        # CPU trials exist to test the search without a GPU; the process's peak RSS stands in.
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        result.update({"peakAllocatedBytes": rss, "peakReservedBytes": rss, "deviceUsedBytes": None,
                       "deviceTotalBytes": None, "device": "cpu"})
    return result


def compute_apps():
    """{pid: used bytes} from nvidia-smi --query-compute-apps, or an error string."""
    import subprocess

    try:
        run = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=20,
        )
    except Exception as error:
        return "nvidia-smi did not run (%s)" % one_line(error)
    if run.returncode != 0:
        return "nvidia-smi failed: %s" % one_line(run.stderr or run.stdout)
    apps = {}
    for line in run.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            apps[int(parts[0])] = apps.get(int(parts[0]), 0) + int(parts[1]) * 1024 * 1024
    return apps


def process_used_bytes():
    """This process's memory on the GPU as nvidia-smi shows it (context + reserved); None if unknown."""
    apps = compute_apps()
    return apps.get(os.getpid()) if isinstance(apps, dict) else None


def pid_memory(pid):
    apps = compute_apps()
    if not isinstance(apps, dict):
        return {"status": "error", "errorKind": "pid", "error": apps}
    if pid not in apps:
        return {"status": "error", "errorKind": "pid",
                "error": "process %d uses no GPU memory that nvidia-smi shows (its compute apps: %s)" % (
                    pid, ", ".join(str(p) for p in sorted(apps)) or "none")}
    return {"status": "ok", "pid": pid, "usedBytes": apps[pid]}


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
