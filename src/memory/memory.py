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
import math
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


# Failures of the user's input: reported as errors (exit 2). Anything else that stops a trace is
# the trace failing to follow the model, and the formula tier answers instead.
USER_ERROR_KINDS = ("config", "factory", "lora", "request", "no-transformers", "no-torch", "no-cuda", "pid")


def run(request):
    started = time.time()
    mode = request.get("mode")
    if mode in ("trace", "params"):
        # TorchScript-scripted helpers (DeBERTa-v2's) cannot run on fake tensors; as plain Python
        # functions they trace like the rest. Read when torch is imported, so set first.
        os.environ.setdefault("PYTORCH_JIT", "0")
    try:
        if mode == "pid":  # seed 001's rule from a running process: no torch needed
            return dict(pid_memory(int(request.get("pid") or 0)), seconds=round(time.time() - started, 3))
        torch = import_torch()
        if mode == "trace":
            result = trace_or_fallback(torch, request)
        elif mode == "params":
            result = dict(model_facts(torch, request), status="ok", torch=torch_info(torch))
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


def trace_or_fallback(torch, request):
    """The trace; where it cannot follow the model (an op without a fake kernel, a library check
    that fake tensors fail), the model's exact parameters from a build on the meta device, with the
    reason in one line, for the formula tier to answer from."""
    try:
        return trace(torch, request)
    except PayloadError as error:
        if error.kind in USER_ERROR_KINDS:
            raise
        reason = str(error)
    except Exception as error:
        reason = "%s: %s" % (type(error).__name__, one_line(error))
        tail = traceback.format_exc()[-2000:]
    else:
        tail = None
    facts = model_facts(torch, request)
    result = dict(facts, status="fallback", reason=reason, torch=torch_info(torch), batch=int(request.get("batch") or 1))
    if tail:
        result["traceback"] = tail
    return result


def model_facts(torch, request):
    """The model built on the meta device (no memory, no values): its parameters by module, exactly
    as the trace would hold them, for the formula tier."""
    device = "meta"
    request = dict(request, fake=True)
    model, _, notes = build_model(torch, request, device, real=False)
    logical = sum(p.numel() for p in model.parameters())
    if request.get("lora") and request.get("task") in ("finetune-lora", "finetune-qlora"):
        try:
            model = apply_lora(torch, model, request["lora"], False, notes)
        except PayloadError:
            raise
        except Exception as error:
            notes.append("LoRA not applied on the meta device (%s)" % one_line(error))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    lora = request.get("task") in ("finetune-lora", "finetune-qlora")
    return {
        "parameterCount": logical + (trainable if lora else 0),
        "trainableParameterCount": trainable if request.get("task") != "infer" else 0,
        "parameters": parameter_groups(torch, model),
        "modelClass": type(model).__name__,
        "notes": notes,
    }


def parameter_groups(torch, model):
    """Parameters grouped by module path with layer numbers folded ("layers.*.mlp.up_proj"), their
    role from the module type, shape and count: what the formula tier's byte rules read."""
    import re

    nn = torch.nn
    roles = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Embedding):
            roles[name] = "embedding"
        elif isinstance(module, nn.Linear):
            roles[name] = "head" if name.split(".")[-1] in OUTPUT_LAYERS else "linear"
        elif isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            roles[name] = "conv"
        elif "norm" in type(module).__name__.lower():
            roles[name] = "norm"
    groups = {}
    for name, parameter in model.named_parameters():
        owner, _, leaf = name.rpartition(".")
        role = roles.get(owner, "other")
        if leaf == "bias" and role in ("linear", "conv", "head"):
            role = "bias"
        path = re.sub(r"\.\d+\.", ".*.", "." + name + ".").strip(".")
        key = (path, tuple(parameter.shape), role, str(parameter.dtype).replace("torch.", ""),
               bool(parameter.requires_grad))
        groups[key] = groups.get(key, 0) + 1
    return [{"path": k[0], "shape": list(k[1]), "role": k[2], "dtype": k[3], "trainable": k[4], "count": n}
            for k, n in groups.items()]


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
    # Tensors made with the legacy torch.Tensor(size) constructor ignore the default device: put
    # every parameter and buffer where the model runs, as a user's model.to("cuda") does.
    stray = [t for t in list(model.parameters()) + list(model.buffers()) if t.device.type != torch.device(device).type]
    if stray and device != "meta":
        with fake_params_reassignable(torch, not real):
            model = model.to(device)
        notes.append("%d parameter/buffer tensor(s) were built off the device and moved to it" % len(stray))
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
    if not real:
        no_layerdrop(config, notes)
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


def no_layerdrop(config, notes):
    """LayerDrop (wav2vec2, HuBERT, BART...: layerdrop, encoder_layerdrop, decoder_layerdrop) skips
    whole layers at random in training, so a real step's memory varies from step to step; the trace
    takes the step that skips none, the most a step can hold."""
    dropped = []
    configs = [config] + [getattr(config, name, None) for name in (
        "text_config", "vision_config", "audio_config", "encoder", "decoder", "speech_config")]
    for sub in configs:
        if sub is None or not hasattr(sub, "to_dict"):
            continue
        for key, value in list(vars(sub).items()):
            if key.endswith("layerdrop") and isinstance(value, (int, float)) and value > 0:
                setattr(sub, key, 0.0)
                dropped.append("%s %s" % (key, value))
    if dropped:
        notes.append("LayerDrop off in the trace (%s): the step that skips no layer, the most a step holds"
                     % ", ".join(sorted(set(dropped))))


def device_context(torch, device):
    return torch.device(device) if hasattr(torch.device(device), "__enter__") else contextlib.ExitStack()


def hf_inputs(torch, model, request, device):
    """A batch for a transformers model, from its forward's parameters, its main input and its head.

    Token models get input_ids (below every special multimodal token id, so no image or audio
    placeholder is drawn); vision models pixel_values at the config's image size; speech models
    input_features (Whisper: num_mel_bins x 2 x max_source_positions, the only length it takes) or
    input_values (raw audio; --seq-len counts the frames after the feature encoder's strides);
    encoder-decoders decoder_input_ids and labels; vision-text models both inputs and return_loss.
    Labels follow the head: tokens for LM heads, one class per sample for classifiers, short
    transcripts for CTC."""
    import inspect

    config = model.config
    seq = int(request.get("seqLen") or 512)
    name = type(model).__name__
    main_input = getattr(model, "main_input_name", "input_ids")
    try:
        accepted = set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        accepted = {main_input}
    text = text_config_of(config)
    vocab = token_range(config, text)
    num_labels = int(getattr(config, "num_labels", 2) or 2)
    encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
    decoder_len = min(seq, int(getattr(config, "max_target_positions", 0) or seq))

    def make(batch):
        kwargs = {}
        if main_input == "pixel_values" or ("pixel_values" in accepted and "input_ids" in accepted
                                             and "return_loss" in accepted):
            kwargs["pixel_values"] = pixel_batch(torch, config, request, batch, device)
        if main_input == "input_features":
            kwargs["input_features"] = feature_batch(torch, config, seq, batch, device)
        if main_input == "input_values":
            kwargs["input_values"] = torch.randn(batch, seq * conv_stride(config), device=device)
        if main_input == "input_ids" or ("input_ids" in accepted and "return_loss" in accepted):
            kwargs["input_ids"] = torch.randint(0, vocab, (batch, seq), device=device)
        if not kwargs and main_input in accepted:
            kwargs[main_input] = torch.randint(0, vocab, (batch, seq), device=device)
        if "return_loss" in accepted and "pixel_values" in kwargs and "input_ids" in kwargs:
            kwargs["return_loss"] = True
        if encoder_decoder and "decoder_input_ids" in accepted:
            kwargs["decoder_input_ids"] = torch.randint(0, vocab, (batch, decoder_len), device=device)
            if "labels" in accepted:
                kwargs["labels"] = torch.randint(0, vocab, (batch, decoder_len), device=device)
        elif "labels" in accepted:
            labels = head_labels(torch, name, kwargs, vocab, num_labels, batch, seq, device)
            if labels is not None:
                kwargs["labels"] = labels
        return kwargs, None

    return make


def text_config_of(config):
    for attr in ("text_config", "decoder", "language_config", "llm_config"):
        sub = getattr(config, attr, None)
        if sub is not None and hasattr(sub, "to_dict"):
            return sub
    return config


def token_range(config, text):
    """Token ids to draw from: the vocabulary, below any special multimodal token (an image or audio
    placeholder drawn at random makes the model expect features it was not given)."""
    vocab = int(getattr(text, "vocab_size", 0) or getattr(config, "vocab_size", 0) or 1000)
    lowest = vocab
    for source in (config, text):
        for key, value in vars(source).items():
            special = key.endswith(("token_id", "token_index")) and not key.startswith(
                ("pad", "bos", "eos", "decoder_start", "sep", "cls", "mask", "unk"))
            if special and isinstance(value, int) and 16 < value < lowest:
                lowest = value
    return max(2, lowest)


def pixel_batch(torch, config, request, batch, device):
    vision = getattr(config, "vision_config", None) or config
    size = request.get("imageSize") or getattr(vision, "image_size", None) or getattr(config, "image_size", 224)
    if isinstance(size, dict):
        size = size.get("height") or size.get("shortest_edge") or 224
    height, width = (size, size) if isinstance(size, int) else (int(size[0]), int(size[-1]))
    channels = int(getattr(vision, "num_channels", 3) or 3)
    frames = getattr(vision, "num_frames", None)
    if isinstance(frames, int) and frames > 1:
        return torch.randn(batch, frames, channels, height, width, device=device)
    return torch.randn(batch, channels, height, width, device=device)


def feature_batch(torch, config, seq, batch, device):
    mel = getattr(config, "num_mel_bins", None)
    source_positions = getattr(config, "max_source_positions", None)
    if isinstance(mel, int) and isinstance(source_positions, int):
        # Whisper's encoder takes exactly 2 x max_source_positions frames (30 s of audio).
        return torch.randn(batch, mel, 2 * source_positions, device=device)
    width = int(getattr(config, "input_feat_per_channel", 0) or getattr(config, "feature_size", 0) or mel or 80)
    channels = int(getattr(config, "input_channels", 1) or 1)
    return torch.randn(batch, seq, width * channels, device=device)


def conv_stride(config):
    stride = 1
    for step in getattr(config, "conv_stride", None) or [1]:
        stride *= int(step)
    return stride


def head_labels(torch, name, kwargs, vocab, num_labels, batch, seq, device):
    if "ForCTC" in name:
        return torch.randint(1, max(2, vocab), (batch, max(1, seq // 4)), device=device)
    if any(part in name for part in ("SequenceClassification", "ImageClassification", "AudioClassification",
                                      "VideoClassification", "MultipleChoice")):
        return torch.randint(0, num_labels, (batch,), device=device)
    if any(part in name for part in ("CausalLM", "LMHead", "MaskedLM", "PreTraining", "ConditionalGeneration")):
        ids = kwargs.get("input_ids")
        return ids if ids is not None else None
    return None


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
    """LoRA as users run it: peft's get_peft_model with the rank, alpha, dropout and target modules
    asked (its defaults otherwise: every Linear but the output layer, adapters upcast to float32).
    Where peft does not import, gpuprep's own minimal adapters, and the report says so."""
    try:
        import peft
    except Exception:
        peft = None
    if peft is None:
        own_lora(torch, model, lora, real, notes)
        notes.append("peft is not installed here: gpuprep's own adapters (no dropout) stood in for it")
        return model
    targets = lora.get("targets") or []
    rank = int(lora["rank"])
    config = peft.LoraConfig(
        r=rank,
        lora_alpha=float(lora.get("alpha", 2 * rank)),
        lora_dropout=float(lora.get("dropout") or 0.0),
        target_modules=targets or "all-linear",
        bias="none",
    )
    try:
        with with_no_init(torch, not real), fake_params_reassignable(torch, not real):
            wrapped = peft.get_peft_model(model, config)
    except ValueError as error:
        raise PayloadError("lora", "peft %s: %s" % (peft.__version__, one_line(error)))
    adapted = sum(1 for name, _ in wrapped.named_modules() if name.endswith(".lora_A"))
    notes.append("LoRA r=%d on %d layers with peft %s (dropout %s)" % (
        rank, adapted, peft.__version__, lora.get("dropout") or 0))
    return wrapped


@contextlib.contextmanager
def fake_params_reassignable(torch, fake):
    """nn.Module._apply swaps a fake parameter in place (torch.utils.swap_tensors), which fails when
    anything holds a weak reference to it, as fake-tensor bookkeeping does; peft moves its adapters
    to the base layer's dtype with .to(). For fake tensors each parameter is assigned anew instead."""
    nn = torch.nn
    original = nn.Module._apply
    if not fake:
        yield
        return

    def reassigning_apply(module, fn, recurse=True):
        if recurse:
            for child in module.children():
                reassigning_apply(child, fn)
        for key, param in list(module._parameters.items()):
            if param is not None:
                with torch.no_grad():
                    module._parameters[key] = nn.Parameter(fn(param), requires_grad=param.requires_grad)
        for key, buffer in list(module._buffers.items()):
            if buffer is not None:
                module._buffers[key] = fn(buffer)
        return module

    nn.Module._apply = reassigning_apply
    try:
        yield
    finally:
        nn.Module._apply = original


def own_lora(torch, model, lora, real, notes):
    """Minimal LoRA: Linear layers whose name ends with a target get A (r x in) and B (out x r)."""
    nn = torch.nn
    targets = lora.get("targets") or []
    rank = int(lora["rank"])
    scale = float(lora.get("alpha", 2 * rank)) / rank

    class LoraLinear(nn.Module):
        def __init__(self, base):
            nn.Module.__init__(self)
            self.base = base
            device = base.weight.device
            # peft upcasts adapters to float32 (autocast_adapter_dtype=True); so do these.
            self.lora_a = nn.Parameter(torch.empty(rank, base.in_features, dtype=torch.float32, device=device))
            self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank, dtype=torch.float32, device=device))
            if real:
                nn.init.kaiming_uniform_(self.lora_a, a=5 ** 0.5)

        def forward(self, x):
            update = (x.to(self.lora_a.dtype) @ self.lora_a.t() @ self.lora_b.t()) * scale
            return self.base(x) + update.to(x.dtype)

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
            if not targets and child_name in OUTPUT_LAYERS:
                continue
            setattr(module, child_name, LoraLinear(child))
            replaced.append(full)
    if not replaced:
        raise PayloadError("lora", "no Linear layer matches --lora-targets %s" % ",".join(targets))
    notes.append("LoRA r=%d on %d Linear layers (gpuprep's own adapters)" % (rank, len(replaced)))


OUTPUT_LAYERS = ("lm_head", "classifier", "score", "proj_out", "output_projection")


def quantize_4bit(torch, model, request, notes):
    """QLoRA's frozen base: every Linear but the output layer becomes a stand-in that holds what
    bitsandbytes' Linear4bit holds on the GPU, and allocates what its matmul allocates.

    bitsandbytes functional.quantize_4bit (bitsandbytes-foundation/bitsandbytes@c5ae7bc8, blocksize
    64 by default): the weight packed two 4-bit values per uint8 byte (numel / 2 B), one float32
    absmax per 64-value block; with double quantization (compress_statistics) the absmax values are
    themselves quantized blockwise (blocksize 256): one uint8 per block, a float32 absmax per 256
    blocks, a float32 offset and the 256-entry float32 code. MatMul4Bit dequantizes the whole weight
    to the compute dtype for the forward and again for the input's gradient, and saves the input."""
    nn = torch.nn
    compute = getattr(torch, request.get("qloraComputeDtype") or "bfloat16")
    double = request.get("qloraDoubleQuant", True)

    class Dequantized(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, packed, out_features, in_features, bias):
            ctx.save_for_backward(x)
            ctx.shape = (out_features, in_features)
            weight = torch.empty(ctx.shape, dtype=compute, device=x.device)
            return nn.functional.linear(x, weight.to(x.dtype), bias)

        @staticmethod
        def backward(ctx, grad):
            weight = torch.empty(ctx.shape, dtype=compute, device=grad.device)
            return grad @ weight.to(grad.dtype), None, None, None, None

    class Linear4bitStandIn(nn.Linear):
        def __init__(self, base):
            nn.Module.__init__(self)
            self.in_features, self.out_features = base.in_features, base.out_features
            numel = base.in_features * base.out_features
            device = base.weight.device
            self.weight = nn.Parameter(torch.empty((numel + 1) // 2, 1, dtype=torch.uint8, device=device),
                                       requires_grad=False)
            self.bias = base.bias
            blocks = (numel + 63) // 64
            if double:
                self.register_buffer("absmax", torch.empty(blocks, dtype=torch.uint8, device=device))
                self.register_buffer("absmax2", torch.empty((blocks + 255) // 256, dtype=torch.float32, device=device))
                self.register_buffer("code2", torch.empty(256, dtype=torch.float32, device=device))
                self.register_buffer("offset", torch.empty((), dtype=torch.float32, device=device))
            else:
                self.register_buffer("absmax", torch.empty(blocks, dtype=torch.float32, device=device))

        def forward(self, x):
            return Dequantized.apply(x, self.weight, self.out_features, self.in_features, self.bias)

    count = 0
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is nn.Linear and child_name not in OUTPUT_LAYERS:
                setattr(module, child_name, Linear4bitStandIn(child))
                count += 1
    notes.append("QLoRA: %d Linear layers held as bitsandbytes NF4 (blocksize 64%s), dequantized to %s per use"
                 % (count, ", double quantization" if double else "", str(compute).replace("torch.", "")))


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
            return adamw8bit_stand_in(torch, parameters, lr)
        try:
            import bitsandbytes
        except Exception as error:
            raise PayloadError("unsupported", "adamw8bit needs bitsandbytes, which does not import here (%s)" % one_line(error))
        return bitsandbytes.optim.AdamW8bit(parameters, lr=lr)
    raise PayloadError("request", "unknown optimizer %r" % name)


def prepare(torch, request, device, real):
    """Model, inputs, optimizer and notes, set up for the work asked."""
    task = request.get("task") or "train"
    if task == "finetune-qlora" and real:
        raise PayloadError("unsupported", "--measure does not run finetune-qlora yet (it needs bitsandbytes' "
                           "4-bit layers loaded from weights); the trace tier sizes it")
    model, make_inputs, notes = build_model(torch, request, device, real)
    logical = sum(p.numel() for p in model.parameters())
    if task == "finetune-qlora":
        quantize_4bit(torch, model, request, notes)
    if request.get("lora") and task in ("finetune-lora", "finetune-qlora"):
        model = apply_lora(torch, model, request["lora"], real, notes)
    if request.get("gradCheckpointing") and task != "infer":
        enable_checkpointing(torch, model, notes)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = None
    if task != "infer":
        if not trainable:
            raise PayloadError("request", "the model has no trainable parameters")
        optimizer = make_optimizer(torch, request, trainable, not real, device)
    adapters = sum(p.numel() for p in trainable) if task in ("finetune-lora", "finetune-qlora") else 0
    counts = {
        "parameterCount": logical + adapters,
        "trainableParameterCount": sum(p.numel() for p in trainable) if task != "infer" else 0,
    }
    return model, make_inputs, optimizer, notes, counts


def adamw8bit_stand_in(torch, parameters, lr):
    """What bitsandbytes' AdamW8bit holds, for fake tensors (its CUDA kernels cannot run on them):
    per tensor of at least min_8bit_size = 4096 elements two uint8 states plus a float32 absmax per
    256-element block for each (blockwise dynamic quantization), and the two 256-entry float32
    quantization maps; smaller tensors keep two float32 states. The update is one fused kernel in
    place, so no whole-group temporaries (bitsandbytes-foundation/bitsandbytes@c5ae7bc8,
    bitsandbytes/optim/optimizer.py Optimizer2State.init_state)."""

    class AdamW8bitStandIn(torch.optim.Optimizer):
        def __init__(self, params):
            torch.optim.Optimizer.__init__(self, params, {"lr": lr})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = torch.zeros((), dtype=torch.float32)
                        if p.numel() >= 4096:
                            blocks = (p.numel() + 255) // 256
                            state["state1"] = torch.zeros_like(p, dtype=torch.uint8)
                            state["state2"] = torch.zeros_like(p, dtype=torch.uint8)
                            state["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
                            state["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
                            state["qmap1"] = torch.zeros(256, dtype=torch.float32, device=p.device)
                            state["qmap2"] = torch.zeros(256, dtype=torch.float32, device=p.device)
                        else:
                            state["state1"] = torch.zeros_like(p, dtype=torch.float32)
                            state["state2"] = torch.zeros_like(p, dtype=torch.float32)
                    p.add_(p.grad, alpha=-group["lr"])
            return None

    return AdamW8bitStandIn(parameters)


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


# ---------------------------------------------------------------- following data-dependent code on fake tensors


SHADOW_LIMIT = 1 << 20  # elements: tensors this small also get a real CPU copy (microseconds per op)
# Kept as an attribute, not in a weak dictionary: a weak reference stops nn.Module.to() from swapping
# a fake parameter (peft moves its adapters that way).
SHADOW = "_gpuprep_shadow"


def fake_fixes(torch):
    """A dispatch mode under the tracker and over FakeTensorMode that lets fake tensors follow code
    that reads values. Small tensors (index arithmetic, drop-path rates, token ids, masks) carry a
    real CPU "shadow" computed beside the fake op, so .item(), .tolist(), nonzero() and boolean
    indexing get the answer the real run gets. Where no shadow exists a scalar is guessed (counted
    in the notes) and a data-dependent shape takes its upper bound, which errs high. Ops whose fake
    kernel is stricter than the CUDA kernel (torch._grouped_mm on float32 in torch 2.11) are shaped
    through bfloat16 copies; the copies are made below the tracker, so they are not counted."""
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
    from torch.utils._pytree import tree_flatten, tree_map

    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, FakeTensor

    scalar = torch.ops.aten._local_scalar_dense.default

    class FakeFixes(TorchDispatchMode):
        def __init__(self):
            TorchDispatchMode.__init__(self)
            self.guessed = 0
            self.upper_bounds = 0
            self.before_op = None
            self.widened = set()

        def shadow_of(self, tensor):
            """The real copy of a fake tensor; a real (non-fake) CPU tensor is its own."""
            if not isinstance(tensor, FakeTensor):
                return tensor if tensor.device.type == "cpu" else None
            return getattr(tensor, SHADOW, None)

        def real_of(self, value):
            if isinstance(value, torch.Tensor):
                return getattr(value, SHADOW, None)
            return value

        def shape_only_args(self, func, args, kwargs):
            """ones_like, zeros_like, full_like, new_ones...: the input gives only its shape and dtype,
            so the real result needs no shadow of it."""
            name = func.overloadpacket.__name__
            if not (name.endswith("_like") or name.startswith("new_")) or "rand" in name:
                return None
            if not args or not isinstance(args[0], torch.Tensor) or args[0].numel() > SHADOW_LIMIT:
                return None
            with _disable_current_modes():
                stand_in = torch.empty(tuple(args[0].shape), dtype=args[0].dtype)
            rest = tuple(self.shadow_of(a) if isinstance(a, torch.Tensor) else a for a in args[1:])
            if any(r is None for r in rest):
                return None
            real_kwargs = {k: ("cpu" if k == "device" and v is not None else v) for k, v in kwargs.items()}
            return (stand_in,) + rest, real_kwargs

        def shadow_args(self, args, kwargs):
            flat, _ = tree_flatten((args, kwargs))
            tensors = [a for a in flat if isinstance(a, torch.Tensor)]
            if any(self.shadow_of(t) is None for t in tensors):
                return None

            def swap(value):
                if isinstance(value, torch.Tensor):
                    return self.shadow_of(value)
                if isinstance(value, torch.device):
                    return torch.device("cpu")
                return value

            real_args = tree_map(swap, args)
            real_kwargs = {k: ("cpu" if k == "device" and v is not None else swap(v)) for k, v in kwargs.items()}
            return real_args, real_kwargs

        def run_real(self, func, args, kwargs):
            swapped = self.shadow_args(args, kwargs)
            if swapped is None:
                swapped = self.shape_only_args(func, args, kwargs)
            if swapped is None:
                return None
            try:
                with _disable_current_modes():
                    return func(*swapped[0], **swapped[1])
            except Exception:
                return None

        def attach(self, out, real):
            outs, _ = tree_flatten(out)
            reals, _ = tree_flatten(real)
            if len(outs) != len(reals):
                return
            for fake, value in zip(outs, reals):
                if (isinstance(fake, torch.Tensor) and isinstance(value, torch.Tensor)
                        and (value.numel() <= SHADOW_LIMIT or value.storage_offset() == 0 and value.numel() > 0
                             and all(step == 0 for step in value.stride()))
                        and tuple(value.shape) == tuple(fake.shape)):
                    setattr(fake, SHADOW, value)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is scalar:
                real = self.real_of(args[0])
                if real is not None:
                    with _disable_current_modes():
                        return real.item()
                try:
                    return func(*args, **kwargs)  # fake tensors know the value of their constants
                except DataDependentOutputException:
                    self.guessed += 1
                    return guess_scalar(torch, args[0].dtype)
            if self.before_op is not None:
                self.before_op(func, args)
            try:
                out = func(*args, **kwargs)
            except (DynamicOutputShapeException, DataDependentOutputException):
                return self.dynamic_shape(func, args, kwargs)
            except TypeError as error:
                out = self.int_list_overload(func, args, kwargs, error)
            except (RuntimeError, ValueError) as error:
                out = self.widened_dtype(func, args, kwargs, error)
            self.follow(func, args, kwargs, out)
            return out

        def follow(self, func, args, kwargs, out):
            """Keep shadows true: compute the real op where every input has one; drop the shadows of
            inputs an op writes without them."""
            flat_out, _ = tree_flatten(out)
            small = all(not isinstance(t, torch.Tensor) or t.numel() <= SHADOW_LIMIT for t in flat_out)
            real = self.run_real(func, args, kwargs) if small else constant_fill(func, args, out)
            if real is not None:
                self.attach(out, real)
            elif func._schema.is_mutable:
                for value in tree_flatten((args, kwargs))[0]:
                    if isinstance(value, torch.Tensor) and getattr(value, SHADOW, None) is not None:
                        setattr(value, SHADOW, None)

        def dynamic_shape(self, func, args, kwargs):
            """An op whose output size depends on values: its real size where the inputs have
            shadows, else its largest size."""
            real = self.run_real(func, args, kwargs)
            if real is not None:
                reals, spec = tree_flatten(real)
                shapes = [(tuple(r.shape), r.dtype) if isinstance(r, torch.Tensor) else r for r in reals]
            else:
                self.upper_bounds += 1
                shapes, spec = upper_bound(torch, func, args, kwargs), None
            device = first_device(args)
            fakes = [torch.empty(item[0], dtype=item[1], device=device) if isinstance(item, tuple) else item
                     for item in shapes]
            if spec is not None:
                out = spec.unflatten(fakes)
            else:
                out = fakes[0] if len(fakes) == 1 else tuple(fakes)
            if real is not None:
                self.attach(out, real)
            return out

        def int_list_overload(self, func, args, kwargs, error):
            """An op given length tensors that its fake path reads as int lists (ctc_loss's
            input_lengths): the overload taking lists, with the lengths' real values."""
            def as_list(value):
                real = self.shadow_of(value) if isinstance(value, torch.Tensor) else None
                if real is not None and real.dim() == 1 and not real.is_floating_point():
                    with _disable_current_modes():
                        return real.tolist()
                return value

            listed = [as_list(a) for a in args]
            if all(a is b for a, b in zip(listed, args)):
                raise error
            packet = func.overloadpacket
            for name in packet.overloads():
                overload = getattr(packet, name)
                if overload is func:
                    continue
                try:
                    return overload(*listed, **kwargs)
                except (TypeError, RuntimeError):
                    continue
            raise error

        def widened_dtype(self, func, args, kwargs, error):
            """An op whose fake kernel refuses float32 (a check the CUDA kernel no longer makes):
            shape it on bfloat16 copies, return float32 as the real kernel would."""
            text = str(error)
            if "BF16" not in text and "bfloat16" not in text.lower():
                raise error
            to_bf16 = lambda v: v.to(torch.bfloat16) if isinstance(v, torch.Tensor) and v.dtype == torch.float32 else v
            out = func(*tree_map(to_bf16, args), **{k: to_bf16(v) for k, v in kwargs.items()})
            self.widened.add(str(func))
            return tree_map(lambda v: v.to(torch.float32) if isinstance(v, torch.Tensor)
                            and v.dtype == torch.bfloat16 else v, out)

    fills = {"ones": 1, "ones_like": 1, "new_ones": 1, "zeros": 0, "zeros_like": 0, "new_zeros": 0}
    fill_arg = {"full": 1, "full_like": 1, "new_full": 2}

    def constant_fill(func, args, out):
        """A large tensor of one value (ones_like of the audio: wav2vec2's default attention mask)
        gets a shadow of one element expanded to its shape, so the lengths summed from it are real."""
        name = func.overloadpacket.__name__
        if not isinstance(out, torch.Tensor) or (name not in fills and name not in fill_arg):
            return None
        value = fills.get(name)
        if value is None:
            index = fill_arg[name]
            value = args[index] if len(args) > index else None
        if not isinstance(value, (bool, int, float)):
            return None
        with _disable_current_modes():
            return torch.full((), value, dtype=out.dtype).expand(tuple(out.shape))

    return FakeFixes()


def guess_scalar(torch, dtype):
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return 1.0
    return 1


def first_device(args):
    for value in args:
        if hasattr(value, "device"):
            return value.device
        if isinstance(value, (list, tuple)):
            for item in value:
                if hasattr(item, "device"):
                    return item.device
    return None


def upper_bound(torch, func, args, kwargs):
    """A data-dependent result at its largest, as (shape, dtype): every element selected, so the
    estimate errs high, never low. Ops returning several tensors (unique) get each at that size."""
    aten = torch.ops.aten
    source = args[0]
    if func is aten.nonzero.default:
        return [((source.numel(), source.dim()), torch.long)]
    if func is aten.index.Tensor:
        shape = list(source.shape)
        out, consumed = [], 0
        for index in args[1]:
            if index is None:
                out.append(shape[consumed])
                consumed += 1
            elif index.dtype in (torch.bool, torch.uint8):
                out.append(index.numel())
                consumed += index.dim()
            else:
                out.extend(index.shape)
                consumed += 1
        return [(tuple(out + shape[consumed:]), source.dtype)]
    if func is aten.repeat_interleave.Tensor:
        size = kwargs.get("output_size") or int(source.numel()) * 8
        return [((int(size),), source.dtype)]
    name = str(func)
    if "ctc_loss" in name:
        # (loss per sample, log_alpha: samples x input frames x (2 x longest target + 1))
        frames = source.shape[0]
        samples = source.shape[1] if source.dim() == 3 else 1
        lengths = args[3] if len(args) > 3 else None
        longest = max(lengths) if isinstance(lengths, (list, tuple)) and lengths else int(args[1].shape[-1])
        return [((samples,), source.dtype), ((samples, frames, 2 * int(longest) + 1), source.dtype)]
    if "unique" in name:
        return [((source.numel(),), source.dtype), ((source.numel(),), torch.long), ((source.numel(),), torch.long)]
    return [((source.numel(),), source.dtype)]


# ---------------------------------------------------------------- the caching allocator, replayed


# c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch@001074d25084fdb87a799823e395a50f5ec044d3):
# sizes round up to 512 B; requests up to 1 MiB come from 2 MiB "small" segments; 1-10 MiB requests
# from 20 MiB segments; larger ones get a segment of their size rounded up to 2 MiB. A cached free
# block is reused best-fit (smallest that fits) and split when the rest is >= 512 B (small pool)
# or > 1 MiB (large pool); freed neighbours merge. expandable_segments:True keeps one segment per
# pool that grows in 2 MiB (small) or 20 MiB (large) pages and splits any rest >= 512 B.
MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


class _Block(object):
    __slots__ = ("addr", "size", "free", "prev", "next", "small")

    def __init__(self, addr, size, small):
        self.addr, self.size, self.free, self.small = addr, size, True, small
        self.prev = self.next = None


class AllocatorModel(object):
    """The caching allocator's bookkeeping without the memory: what it reserves from the device
    (segments) for a sequence of allocations and frees, and where it would run out."""

    def __init__(self, expandable=False, capacity=None):
        import bisect

        self.bisect = bisect
        self.expandable = expandable
        self.capacity = capacity
        self.free_lists = {True: [], False: []}  # (size, addr) of free blocks, per pool (small?)
        self.blocks = {}  # addr -> free block
        self.live = {}  # key -> block
        self.tails = {True: None, False: None}  # expandable: the last block of each pool's segment
        # cudaMalloc hands out each new segment below the last (the real histories of
        # docs/reports/memory-history-h100: 294 of 357 segments of Pythia-410M b=16 came below their
        # predecessor); best fit breaks ties between equal free blocks by the lower address, so the
        # order of addresses decides which of two freed segments a request splits.
        self.next_addr = 1 << 50
        self.reserved = self.allocated = self.peak_reserved = self.peak_allocated = 0
        self.oom = False

    @staticmethod
    def round_size(size):
        return MIN_BLOCK if size < MIN_BLOCK else MIN_BLOCK * ((size + MIN_BLOCK - 1) // MIN_BLOCK)

    @staticmethod
    def segment_size(size):
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)

    def _take(self, block):
        entries = self.free_lists[block.small]
        index = self.bisect.bisect_left(entries, (block.size, block.addr))
        del entries[index]
        del self.blocks[block.addr]

    def _put(self, block):
        self.bisect.insort(self.free_lists[block.small], (block.size, block.addr))
        self.blocks[block.addr] = block

    def malloc(self, key, size):
        size = self.round_size(size)
        small = size <= SMALL_SIZE
        entries = self.free_lists[small]
        index = self.bisect.bisect_left(entries, (size, -1))
        if index < len(entries):
            block = self.blocks[entries[index][1]]
            self._take(block)
        else:
            block = self._grow(size, small)
            if block is None:
                self.oom = True
                return False
        rest = block.size - size
        if rest >= MIN_BLOCK if (small or self.expandable) else rest > SMALL_SIZE:
            tail = _Block(block.addr + size, rest, small)
            tail.prev, tail.next = block, block.next
            if block.next is not None:
                block.next.prev = tail
            block.next = tail
            block.size = size
            if self.tails[small] is block:
                self.tails[small] = tail
            self._put(tail)
        block.free = False
        self.live[key] = block
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return True

    def _grow(self, size, small):
        if self.expandable:
            return self._grow_expandable(size, small)
        want = self.segment_size(size)
        if self.capacity is not None and self.reserved + want > self.capacity:
            self.release_cached()
            if self.reserved + want > self.capacity:
                return None
        self.next_addr -= want + (1 << 30)
        block = _Block(self.next_addr, want, small)
        self._reserve(want)
        return block

    def _grow_expandable(self, size, small):
        page = SMALL_BUFFER if small else LARGE_BUFFER
        tail = self.tails[small]
        have = tail.size if tail is not None and tail.free else 0
        want = page * ((size - have + page - 1) // page)
        if self.capacity is not None and self.reserved + want > self.capacity:
            return None
        self._reserve(want)
        if have:
            self._take(tail)
            tail.size += want
            return tail
        if tail is None:
            self.next_addr -= 1 << 44
        block = _Block(self.next_addr if tail is None else tail.addr + tail.size, want, small)
        if tail is not None:
            tail.next, block.prev = block, tail
        self.tails[small] = block
        return block

    def _reserve(self, amount):
        self.reserved += amount
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def release_cached(self):
        """What the allocator does before reporting out of memory: free every cached segment no
        tensor uses (a free block that was never split)."""
        for small in (True, False):
            for size, addr in list(self.free_lists[small]):
                block = self.blocks[addr]
                if block.prev is None and block.next is None:
                    self._take(block)
                    self.reserved -= block.size

    def free(self, key):
        block = self.live.pop(key, None)
        if block is None:
            return
        self.allocated -= block.size
        block.free = True
        for neighbour in (block.prev, block.next):
            if neighbour is not None and neighbour.free:
                self._take(neighbour)
                if neighbour is block.prev:
                    block.addr, block.prev = neighbour.addr, neighbour.prev
                    if neighbour.prev is not None:
                        neighbour.prev.next = block
                else:
                    block.next = neighbour.next
                    if neighbour.next is not None:
                        neighbour.next.prev = block
                    if self.tails[block.small] is neighbour:
                        self.tails[block.small] = block
                block.size += neighbour.size
        self._put(block)


def replay(events, expandable=False, capacity=None):
    """Run a sequence of ("a", key, bytes) / ("f", key) events through the allocator model."""
    model = AllocatorModel(expandable=expandable, capacity=capacity)
    for event in events:
        if event[0] == "a":
            if not model.malloc(event[1], event[2]):
                break
        elif event[0] == "f":
            model.free(event[1])
    return model


def allocator_settings():
    """expandable_segments from PYTORCH_CUDA_ALLOC_CONF (PYTORCH_ALLOC_CONF in newer torch)."""
    text = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or os.environ.get("PYTORCH_ALLOC_CONF") or ""
    options = dict(part.split(":", 1) for part in text.replace(" ", "").split(",") if ":" in part)
    return {"expandableSegments": options.get("expandable_segments", "").lower() == "true", "conf": text}


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



def recorder_class(torch, device_type):
    """MemTracker that also keeps the order of every allocation and free on `device_type`, for the
    allocator model (MemTracker itself keeps only the running totals)."""
    from torch.distributed._tools import mem_tracker

    storages_of = getattr(mem_tracker, "get_untyped_storages", lambda t: {t.untyped_storage()})
    TOTAL = getattr(mem_tracker, "_TOTAL_KEY", "Total")

    class Recorder(mem_tracker.MemTracker):
        def __init__(self):
            mem_tracker.MemTracker.__init__(self)
            self.events = []
            self.marks = {}
            self.op = None  # the op whose outputs are being tracked (None: outside any op)
            self.ops = {}  # event index -> (op name, backward?, keys of the op's first input)
            self.kernel_calls = None  # a list: the calls to be measured on the GPU
            self.kernel_filter = measurable_op  # which ops' calls go in it

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            nested = self.op is not None
            self.op = (func, args)
            start = len(self.events)
            try:
                return mem_tracker.MemTracker.__torch_dispatch__(self, func, types, args, kwargs)
            finally:
                self.op = None
                if not nested and self.kernel_calls is not None and self.kernel_filter(func):
                    self.kernel_calls.append(kernel_call(torch, func, args, kwargs or {}, start, len(self.events)))

        def _update_peak_stats(self, peak_state):
            """The whole step's peak only (get_tracker_snapshot("peak") reads it). MemTracker also
            keeps a peak per module and walks every module it has seen after every op to do so:
            quadratic, half the time of a 24-layer model's trace, and never read here."""
            peaks, snaps = getattr(self, "_peak_mem", None), getattr(self, "_peak_mem_snap", None)
            current = getattr(self, "_curr_mem_snap", None)
            if peaks is None or snaps is None or current is None:
                return mem_tracker.MemTracker._update_peak_stats(self, peak_state)
            for dev, dev_snap in current.items():
                total = dev_snap[TOTAL]
                if peaks.get(dev, 0) < total:
                    peaks[dev] = total
                    snaps[dev] = dict(dev_snap)

        def _annotate(self):
            func, args = self.op
            first = args[0] if args and isinstance(args[0], torch.Tensor) else None
            keys = []
            if first is not None:
                for storage in storages_of(first):
                    known = self._WINFO.get(storage, (None, None))[0]
                    if known is not None:
                        keys.append(id(known))
            self.ops[len(self.events)] = (str(func), bool(self._mod_tracker.is_bw), keys)

        def _update_snap(self, u_type, winfo, *args, **kwargs):
            old = getattr(winfo, "mem_consumed", 0)
            result = mem_tracker.MemTracker._update_snap(self, u_type, winfo, *args, **kwargs)
            if winfo.device.type == device_type:
                kind = getattr(u_type, "name", str(u_type))
                key = id(winfo)
                # Each allocation keeps its exact bytes beside the tracker's rounded figure:
                # exact sizes are affine in the batch, which lets other batches be interpolated.
                if kind == "ADD":
                    if self.op is not None:
                        self._annotate()
                    self.events.append(("a", key, winfo.mem_consumed, winfo.size * winfo.element_size))
                elif kind == "DEL":
                    self.events.append(("f", key))
                elif kind == "SIZE" and winfo.mem_consumed != old:
                    self.events.append(("f", key))
                    self.events.append(("a", key, winfo.mem_consumed, winfo.size * winfo.element_size))
            return result

        def mark(self, name):
            self.marks[name] = len(self.events)

    return Recorder


def accumulate_in_place(events, ops):
    """The traced events with autograd's gradient accumulation as the real run does it. When two
    gradients reach one tensor, InputBuffer::accumulate adds the second into the first in place
    if it holds the last reference to it (can_accumulate_inplace), but never for tensor subclasses
    (torch/csrc/autograd/input_buffer.cpp), so on fake tensors every accumulation is out of place:
    a new buffer (aten.add.Tensor in backward), then the old one freed. Where the trace shows that
    pair (the add's first input freed right after, same size), the real run kept one buffer: the
    pair is dropped and the new buffer's later free is the old one's. Keys become unique tokens,
    since the tracker's keys (object ids) can be reused once freed. Same length, so marks hold:
    dropped events become ("n",)."""
    out, live, sizes, fresh = [], {}, {}, [0]

    def token(key):
        fresh[0] += 1
        live[key] = fresh[0]
        return fresh[0]

    index = 0
    while index < len(events):
        event = events[index]
        op = ops.get(index)
        following = events[index + 1] if index + 1 < len(events) else None
        if (event[0] == "a" and op is not None and op[0] == "aten.add.Tensor" and op[1]
                and following is not None and following[0] == "f" and following[1] in op[2]
                and following[1] in live and sizes.get(live[following[1]]) == event[2]):
            live[event[1]] = live.pop(following[1])
            out += [("n",), ("n",)]
            index += 2
            continue
        if event[0] == "a":
            sizes[token(event[1])] = event[2]
            out.append(("a", live[event[1]], event[2]))
        elif event[1] in live:
            out.append(("f", live.pop(event[1])))
        else:
            out.append(("n",))
        index += 1
    return out


# ---------------------------------------------------------------- kernels' own allocations

# Aten ops whose CUDA kernels take memory from the caching allocator beyond their outputs, which
# fake tensors never do: flash attention's backward keeps a float32 dq accumulator and the softmax
# sums (RoBERTa-base b=16: 12 x 138,412,032 B and 12 x 25,559,296 B per step in the real history of
# docs/reports/memory-holdout-lanes-h200.jsonl, measured since as a reduction's staging buffer, below),
# attention kernels keep softmax sums, cuDNN takes a workspace per convolution, embedding's backward
# sorts its indices in scratch buffers.
KERNEL_OPS = frozenset((
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_cudnn_attention_backward",
    "_flash_attention_forward", "_flash_attention_backward",
    "_efficient_attention_forward", "_efficient_attention_backward",
    "convolution", "convolution_backward", "cudnn_convolution", "cudnn_convolution_transpose",
    "embedding_dense_backward",
    # Found by bench/memory/kernel-discovery.py on a real step (H100, torch 2.11): CUDA reductions
    # that span blocks take a staging buffer (RoBERTa-base b=16: sum.dim_IntList, up to 132 MiB, 73
    # calls a step), and layer norm over a transposed input copies it (data2vec-audio's feature
    # encoder: up to 1,016 MiB in backward).
    "sum", "mean", "native_layer_norm", "native_layer_norm_backward",
))
CONVOLUTION_OPS = frozenset(("convolution", "convolution_backward", "cudnn_convolution", "cudnn_convolution_transpose"))


class Unmeasurable(Exception):
    pass


# Ops never run again for real: their real call has effects beyond fresh tensors (collectives,
# asserts, stream bookkeeping), reads values back to the host (a sync, no device memory), or takes
# no memory by construction. Every other op of the step is measured (kernelOps "all", the default):
# a fixed list of ops with own memory (KERNEL_OPS, kernelOps "listed") misses the next family's
# op, as LeViT-128S's batch-norm backward and softmax backward did (docs/benchmarks.md, issue 24).
NEVER_RUN_NAMESPACES = frozenset(("c10d", "_c10d_functional", "_c10d_functional_autograd", "_dtensor", "profiler",
                                  "prims", "debugprims"))
NEVER_RUN_OPS = frozenset((
    "_local_scalar_dense", "item", "_assert_async", "_assert_scalar", "_assert_tensor_metadata",
    "sym_constrain_range", "sym_constrain_range_for_size", "_functional_assert_async", "record_stream",
    "_print", "set_", "is_same_size", "_has_compatible_shallow_copy_type", "is_pinned", "_pin_memory",
    "lift_fresh", "lift_fresh_copy", "empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided",
    "resize_", "_resize_output_", "_to_cpu", "_nested_tensor_from_tensor_list",
))


def measurable_op(func):
    """Whether a traced call of `func` is run for real to measure its kernel's own memory: every op
    but views (they alias their input, no kernel runs) and NEVER_RUN_NAMESPACES/NEVER_RUN_OPS."""
    name = getattr(func, "name", lambda: "")()
    namespace = getattr(func, "namespace", name.split("::")[0] if "::" in name else "aten")
    if namespace in NEVER_RUN_NAMESPACES or kernel_op_name(func) in NEVER_RUN_OPS:
        return False
    return not is_view_op(func)


def is_view_op(func):
    """A view op (its output aliases its input, read-only): OpOverload.is_view, or on torch
    without it (< 2.1) the schema's alias annotation on the first return."""
    flag = getattr(func, "is_view", None)
    if flag is not None:
        return bool(flag)
    returns = getattr(getattr(func, "_schema", None), "returns", None) or []
    alias = getattr(returns[0], "alias_info", None) if returns else None
    return alias is not None and not alias.is_write


def listed_op(func):
    return kernel_op_name(func) in KERNEL_OPS


def runs_on_gpu(signature):
    """A rebuilt call worth running on the GPU: some argument is a CUDA tensor (or it makes one),
    its first tensor is not a host tensor (copies to the host take no device memory of their
    own), and nothing is sent to the host (device=cpu)."""
    _, args, kwargs = signature
    tensors = list(tensor_specs(args)) + list(tensor_specs(kwargs))
    settings = dict((item[1][0][1], item[1][1][1]) for item in kwargs[1] if item[1][1][0] == "V")
    device = settings.get("device")
    if device is not None and str(device).startswith("cpu"):
        return False
    if tensors and tensors[0][5] != "cuda" and tensors[0][1] != ():
        return False
    return any(t[5] == "cuda" for t in tensors) or (device is not None and str(device).startswith("cuda"))


def tensor_specs(spec):
    if spec[0] == "T":
        yield spec
    elif spec[0] in ("L", "U"):
        for value in spec[1]:
            for inner in tensor_specs(value):
                yield inner


def split_signatures(signatures, input_limit):
    """Distinct signatures as (to run, not on the GPU, inputs over input_limit bytes)."""
    run, off_gpu, too_large = [], [], []
    for signature in dict.fromkeys(signatures):
        if not runs_on_gpu(signature):
            off_gpu.append(signature)
        elif spec_bytes(signature[1]) + spec_bytes(signature[2]) > input_limit:
            too_large.append(signature)
        else:
            run.append(signature)
    return run, off_gpu, too_large


def spec_bytes(spec):
    """Bytes a rebuilt argument takes (its storage's extent)."""
    total = 0
    for _, shape, stride, offset, dtype, _device in tensor_specs(spec):
        if all(n > 0 for n in shape):
            extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))
            total += extent * dtype_bytes(dtype)
    return total


def dtype_bytes(dtype):
    size = getattr(dtype, "itemsize", None)
    if size is None:  # torch < 2.1
        import torch

        size = torch.empty((), dtype=dtype).element_size()
    return int(size)


def kernel_op_name(func):
    packet = getattr(func, "overloadpacket", None)
    return getattr(packet, "__name__", None)


def arg_spec(torch, value):
    """A traced argument as a hashable description the real call is rebuilt from: a tensor by its
    shape, strides, offset, dtype and device (values do not change these kernels' memory)."""
    if isinstance(value, torch.Tensor):
        return ("T", tuple(int(n) for n in value.shape), tuple(int(n) for n in value.stride()),
                int(value.storage_offset()), value.dtype, value.device.type)
    if isinstance(value, (list, tuple)):
        return ("L" if isinstance(value, list) else "U", tuple(arg_spec(torch, v) for v in value))
    if value is None or isinstance(value, (bool, int, float, str, torch.dtype, torch.device, torch.layout,
                                           torch.memory_format)):
        return ("V", value)
    raise Unmeasurable("argument of type %s" % type(value).__name__)


def kernel_call(torch, func, args, kwargs, start, end):
    """One traced call of a measured op: where its outputs sit in the traced events ([start, end))
    and its signature; None as signature where an argument cannot be rebuilt."""
    try:
        signature = (func, arg_spec(torch, tuple(args)), arg_spec(torch, tuple(sorted(kwargs.items()))))
    except Unmeasurable:
        signature = None
    read = sum(a.numel() * a.element_size() for a in args[:2] if isinstance(a, torch.Tensor))
    return {"start": start, "end": end, "signature": signature, "name": kernel_op_name(func),
            "convolutionBytes": read if kernel_op_name(func) in CONVOLUTION_OPS else 0}


def real_value(torch, spec):
    kind = spec[0]
    if kind == "T":
        _, shape, stride, offset, dtype, device = spec
        extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(n > 0 for n in shape) else 0
        try:  # zeros: an index of 0 is valid for any table, so no kernel reads out of bounds
            storage = torch.zeros(extent, dtype=dtype, device=device)
        except Exception:  # dtypes without a CUDA fill (uint64 RNG states): values unused
            storage = torch.empty(extent, dtype=dtype, device=device)
        return storage.as_strided(shape, stride, offset)
    if kind == "L":
        return [real_value(torch, v) for v in spec[1]]
    if kind == "U":
        return tuple(real_value(torch, v) for v in spec[1])
    return spec[1]


def call_template(entries):
    """A real call's allocator trace (torch.cuda.memory._snapshot()'s device_traces during it) as a
    template: ("out",) where a block stays allocated (an output), ("a", n, bytes) and ("f", n) for
    block n taken and given back inside the call (the kernel's own memory)."""
    items, live = [], {}
    for entry in entries:
        action = entry.get("action")
        if action == "alloc":
            live[entry["addr"]] = len(items)
            items.append(["a", len(items), int(entry["size"])])
        elif action == "free_completed" and entry.get("addr") in live:
            items.append(["f", live.pop(entry["addr"])])
    kept = set(live.values())
    return [("out",) if item[0] == "a" and item[1] in kept else tuple(item) for item in items]


def with_transients(events, ops, marks, spans, first_key):
    """The traced events with each measured call's own allocations put where the real call makes
    them: spans are (start, end, template), sorted and apart, [start, end) the traced events of
    the call's outputs. A template's ("out",) takes the traced events up to the next allocation;
    its ("a", n, bytes) and ("f", n) become events with new keys from first_key on. The ops and
    marks that index events move with them."""
    out, moved, starts, key = [], {}, {}, [first_key]
    keys = {}

    def emit(index):
        moved[index] = len(out)
        out.append(events[index])

    index = 0
    for start, end, template in spans:
        while index < start:
            emit(index)
            index += 1
        starts[start] = len(out)  # a mark set before the call stays before its memory
        for item in aligned_template(template, sum(1 for e in events[start:end] if e[0] == "a")):
            if item[0] == "out":
                while index < end:
                    emit(index)
                    index += 1
                    if out[-1][0] == "a":
                        break
            elif item[0] == "a":
                keys[item[1]] = key[0]
                key[0] += 1
                out.append(("a", keys[item[1]], item[2], item[2]))
            elif item[1] in keys:
                out.append(("f", keys.pop(item[1])))
        while index < end:
            emit(index)
            index += 1
    while index < len(events):
        emit(index)
        index += 1
    moved[len(events)] = len(out)
    return out, {moved[i]: op for i, op in ops.items()}, {name: starts.get(i, moved[i]) for name, i in marks.items()}


def aligned_template(template, traced_outputs):
    """The template as it applies to a traced call with `traced_outputs` allocations. Where the
    real call kept another number of blocks than the trace allocated (its kernel returned a view
    or an input, took a cache it keeps, or the fake kernel allocated differently), its kept blocks
    cannot be matched to the traced ones: the traced outputs stay as traced, all of them first,
    and only the blocks taken and given back inside the call are added, while the outputs are live."""
    kept = sum(1 for item in template if item[0] == "out")
    if kept == traced_outputs:
        return template
    return [("out",)] * traced_outputs + [item for item in template if item[0] != "out"]


def kernel_spans(calls, templates):
    """(start, end, template) of the measured calls with memory of their own, sorted and apart."""
    spans, last = [], -1
    for call in sorted(calls, key=lambda c: c["start"]):
        template = templates.get(call["signature"]) if call["signature"] is not None else None
        if template and any(item[0] == "a" for item in template) and call["start"] >= last:
            spans.append((call["start"], call["end"], template))
            last = call["end"]
    return spans


def kernel_probe(torch, request, real_gpu):
    """A KernelProbe where the trace has a real GPU behind it and the request does not turn it off
    (kernelTransients: false, as the bench's "before" traces do); else None."""
    if not real_gpu or not request.get("kernelTransients", True):
        return None
    return KernelProbe(torch, listed_op if request.get("kernelOps") == "listed" else measurable_op)


class KernelProbe(object):
    """Runs each distinct call of the step's ops (those `selects`) once for real on the GPU, on
    tensors of the traced shapes, strides and dtypes, with the allocator's history on: what it
    allocates and frees inside is its own memory (workspaces, accumulators, staging buffers),
    cached by signature for every later trace. Calls whose arguments alone would take more than
    INPUT_SHARE of the free memory are not run (their own memory is not counted)."""

    INPUT_SHARE = 0.25

    def __init__(self, torch, selects=None):
        self.torch = torch
        self.selects = selects or measurable_op
        self.templates = {}  # signature -> template, or None where the call could not be run
        self.failures = {}  # op name -> first error
        self.too_large = 0
        self.seconds = 0.0

    def measure(self, calls):
        todo = [c["signature"] for c in calls if c["signature"] is not None and c["signature"] not in self.templates]
        if not todo:
            return self.templates
        from torch.utils._python_dispatch import _disable_current_modes

        started = time.time()
        with _disable_current_modes():
            todo = self.runnable(todo)
            try:
                self.start_recording()
            except Exception as error:  # no history to read: every call left to the fallbacks
                self.failures.setdefault("the allocator's history", "%s: %s" % (type(error).__name__, one_line(error)))
                self.templates.update((signature, None) for signature in todo)
                return self.templates
            try:
                for signature in dict.fromkeys(todo):
                    self.templates[signature] = self.run_once(signature)
            finally:
                self.stop_recording()
        self.seconds += time.time() - started
        return self.templates

    def runnable(self, todo):
        """The signatures worth running; the others are recorded as not measured (None)."""
        run, off_gpu, too_large = split_signatures(todo, self.INPUT_SHARE * self.torch.cuda.mem_get_info()[0])
        self.templates.update((signature, None) for signature in off_gpu + too_large)
        self.too_large += len(too_large)
        return run

    def start_recording(self):
        self.warm_blas()
        self.torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=1 << 22)

    def warm_blas(self):
        """This thread's cuBLAS and cuBLASLt workspaces taken before any call is measured: a
        measured matmul would otherwise keep them as if they were its outputs."""
        torch = self.torch
        a = torch.zeros(8, 8, device="cuda")
        torch.addmm(torch.zeros(8, device="cuda"), a, a)
        torch.mm(a, a)
        torch.cuda.synchronize()

    def stop_recording(self):
        self.torch.cuda.memory._record_memory_history(enabled=None)
        self.torch.cuda.empty_cache()

    def run_once(self, signature):
        torch = self.torch
        func, args, kwargs = signature
        try:
            real_args = real_value(torch, args)
            real_kwargs = dict(real_value(torch, kwargs))
            torch.cuda.synchronize()
            seen = len(torch.cuda.memory._snapshot()["device_traces"][0])
            out = func(*real_args, **real_kwargs)
            torch.cuda.synchronize()
            entries = torch.cuda.memory._snapshot()["device_traces"][0][seen:]
            del out, real_args, real_kwargs
            return call_template(entries)
        except Exception as error:
            self.failures.setdefault(kernel_op_name(func), "%s: %s" % (type(error).__name__, one_line(error)))
            return None

    def notes(self):
        measured = [t for t in self.templates.values() if t is not None]
        largest = max([sum(i[2] for i in t if i[0] == "a") for t in measured] or [0])
        own = sum(1 for t in measured if any(i[0] == "a" for i in t))
        lines = []
        if self.templates:
            lines.append("kernels' own memory measured on this GPU: %d distinct calls run once each in %.1f s "
                         "(of %d distinct signatures), %d with memory of their own (the most one call takes for "
                         "itself: %.0f MiB)" % (len(measured), self.seconds, len(self.templates), own,
                                                largest / 1048576.0))
        if self.too_large:
            lines.append("%d distinct calls not run for real (their inputs alone exceed %d%% of the free GPU "
                         "memory): their own memory not counted" % (self.too_large, self.INPUT_SHARE * 100))
        for name, error in sorted(self.failures.items()):
            lines.append("%s could not be run for real (%s): its own memory not counted" % (name, error))
        return lines


# cuBLAS takes its workspace at a thread's first matmul, cuBLASLt its own at the first matmul with a
# fused bias epilogue (addmm with a 1-D bias): aten/src/ATen/cuda/CublasHandlePool.cpp getCurrentCUDABlasHandle
# and getCUDABlasLtWorkspace, aten/src/ATen/native/cuda/Blas.cpp addmm_out_cuda_impl (pytorch/pytorch@26a39059).
CUBLAS_OPS = frozenset(("mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot",
                        "_addmm_activation", "_scaled_mm", "_int_mm"))
CUBLASLT_OPS = frozenset(("addmm", "_addmm_activation", "_scaled_mm"))


def aten_name(op_name):
    """"aten.addmm.default" -> "addmm"."""
    parts = op_name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "aten" else op_name


def workspace_places(ops, start, end, workspaces):
    """Where in the traced step [start, end) a real run allocates its cuBLAS and cuBLASLt workspaces:
    {event index: [(key, bytes), ...]} to follow that event (None: before the step). workspaces is cublas_workspaces' list,
    one (cuBLAS, cuBLASLt) pair per thread, the forward's first and autograd's second. Each thread
    takes its cuBLAS workspace after the output of its first matmul, its cuBLASLt workspace after
    its first matmul with a fused bias, and none where it has no such matmul (the real histories of
    docs/reports/memory-kernels-call2-events-h100.tgz: a 32 MiB and a 1 MiB block right after the
    forward's first addmm, a 32 MiB block at backward's first mm, no 1 MiB block in models without
    biases). A thread with no matmul the trace can see keeps its pair at the start (the cautious
    side: it may call cuBLAS where the trace cannot tell)."""
    places = {}
    for thread in range(len(workspaces) // 2):
        backward = thread == 1
        first = {"blas": None, "lt": None}
        for index in sorted(i for i in ops if start <= i < end and bool(ops[i][1]) == backward):
            name = aten_name(ops[index][0])
            if first["blas"] is None and name in CUBLAS_OPS:
                first["blas"] = index
            if first["lt"] is None and name in CUBLASLT_OPS:
                first["lt"] = index
        blas, lt = workspaces[2 * thread], workspaces[2 * thread + 1]
        if first["blas"] is None:
            places.setdefault(None, []).extend([(("workspace", 2 * thread), blas), (("workspace", 2 * thread + 1), lt)])
            continue
        places.setdefault(first["blas"], []).append((("workspace", 2 * thread), blas))
        if first["lt"] is not None:
            places.setdefault(first["lt"], []).append((("workspace", 2 * thread + 1), lt))
    return places


def step_sequence(events, marks, steps, workspaces, ops=None):
    """The allocations of a real trial in order: the weights, the first step (its cuBLAS workspaces
    taken at each thread's first matmul, its optimizer state created when the optimizer first steps,
    as torch.optim does lazily), the later steps, then the eval step. The trace ran one steady-state
    step; it is replayed."""
    params, state, step_end = events[:marks["params"]], events[marks["params"]:marks["state"]], marks["step"]
    step = events[marks["state"]:step_end]
    evaluation = events[step_end:]
    opt = marks.get("opt", step_end)
    places = workspace_places(ops or {}, marks["state"], step_end, workspaces)

    def tagged(part, tag):
        return [(e[0], (tag, e[1])) + tuple(e[2:]) for e in part if e[0] != "n"]

    sequence = [e for e in params if e[0] != "n"]
    sequence += [("a", key, size) for key, size in places.get(None, [])]
    for index in range(marks["state"], step_end):
        if index == opt:
            sequence += [e for e in state if e[0] != "n"]
        sequence += tagged(events[index:index + 1], 1)
        sequence += [("a", key, size) for key, size in places.get(index, [])]
    if opt >= step_end:
        sequence += [e for e in state if e[0] != "n"]
    for index in range(2, max(2, steps) + 1):
        sequence += tagged(step, index)
    sequence += tagged(evaluation, "eval")
    return sequence


def trace(torch, request):
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        importlib.import_module("torch.distributed._tools.mem_tracker")  # MemTracker: torch >= 2.5
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
    fixes = fake_fixes(torch)
    workspaces = cublas_workspaces(torch, task) if device == "cuda" else []
    replayer = Replayer(request, task, workspaces, device)
    # Kernels' own memory is measured where the fake CUDA tensors have a real GPU behind them.
    probe = kernel_probe(torch, request, device == "cuda" and cuda_ok)
    with FakeTensorMode(allow_non_fake_inputs=True), fixes, unpacked_masks(request), lengths_as_lists(torch), \
            fake_params_reassignable(torch, True):
        request = dict(request, fake=True)
        model, make_inputs, optimizer, notes, counts = prepare(torch, request, device, real=False)
        model.train()
        if optimizer is not None:
            materialize_optimizer_state(torch, optimizer)

        def step_at(size):
            return trace_step(torch, request, model, make_inputs, optimizer, fixes, device, size, probe)

        first = step_at(batch)
        notes.extend(fix_notes(fixes))
        searched = search_error = None
        if request.get("search"):
            try:
                searched = BatchSearch(step_at, replayer, request["search"]).run(first)
            except Exception as error:  # the batch asked is still answered; gpuprep searches by itself
                search_error = "%s: %s" % (type(error).__name__, one_line(error))
    if probe is not None:
        notes.extend(probe.notes())
    if device == "cpu":
        notes.append("traced on fake CPU tensors (this torch has no CUDA): CPU attention kernels keep "
                     "more than CUDA's, so the figure leans high")
    else:
        notes.append("cuBLAS/cuBLASLt workspaces: %.0f MiB (allocated by real matmuls, not by fake tensors)"
                     % (sum(workspaces) / 1048576.0))
    if request.get("eventsOut"):
        save_events(request["eventsOut"], first, workspaces)
    point = replayer.point(first)
    result = {
        "status": "ok",
        "torch": torch_info(torch),
        "traceDevice": device,
        "batch": batch,
        "trackerPeakBytes": point["trackerPeakBytes"],
        "peakAllocatedBytes": point["peakAllocatedBytes"],
        "allocator": point["allocator"],
        "gpu": gpu_facts(torch) if device == "cuda" else None,
        "breakdown": point["breakdown"],
        "notes": notes,
        "traceSeconds": first["seconds"],
    }
    if searched is not None:
        result["search"] = searched
    if search_error is not None:
        result["searchError"] = search_error
    result.update(counts)
    return result


def trace_step(torch, request, model, make_inputs, optimizer, fixes, device, batch, probe=None):
    """One training step (and the eval step when asked) at `batch` under a fresh tracker: the peak
    and what held it, and every allocation and free in order (keys made unique per allocation)."""
    started = time.time()
    task = request.get("task") or "train"
    same_draws(torch)
    tracker = recorder_class(torch, device)()
    tracker.kernel_calls = [] if probe is not None else None
    if probe is not None:
        tracker.kernel_filter = probe.selects
    conv_totals = {"convolutionBytes": 0}
    fixes.before_op = conv_counter(torch, tracker, conv_totals)
    skip_grad_hooks(tracker, model)
    tracker.track_external(model)
    tracker.mark("params")
    hook = None
    if optimizer is not None:
        tracker.track_external(optimizer)
        hook = optimizer.register_step_pre_hook(lambda *args: mark_once(tracker, "opt"))
    tracker.mark("state")
    try:
        with tracker:
            if task == "infer":
                eval_step(torch, request, model, make_inputs, batch, device)
                tracker.mark("step")
            else:
                train_step(torch, request, model, make_inputs, optimizer, batch, device)
                tracker.mark("step")
                if request.get("evalStep"):
                    tracker.reset_mod_stats()  # keeps the peak; lets the modules run again
                    eval_step(torch, request, model, make_inputs, batch, device)
        snapshot = tracker.get_tracker_snapshot("peak")
    finally:
        fixes.before_op = None
        if hook is not None:
            hook.remove()
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
    events, ops = unique_keys(tracker.events, tracker.ops)
    marks, convolution_bytes, extra = dict(tracker.marks), int(conv_totals["convolutionBytes"]), 0
    if probe is not None and tracker.kernel_calls:
        events, ops, marks, measured_conv, extra = measured_kernels(probe, tracker.kernel_calls, events, ops, marks)
        # Measured convolutions bring their cuDNN workspaces: the share-of-bytes allowance is left
        # for the ones that could not be run.
        convolution_bytes = max(0, convolution_bytes - measured_conv)
    breakdown["temporaries"] += extra
    seconds = round(time.time() - started, 3)
    sys.stderr.write("gpuprep memory: traced batch %d in %.1f s (%d events)\n" % (batch, seconds, len(events)))
    return {"batch": batch, "events": events, "ops": ops, "marks": marks, "breakdown": breakdown,
            "peak": int(parts.get("Total", sum(breakdown.values()))) + extra,
            "convolutionBytes": convolution_bytes, "seconds": seconds}


def measured_kernels(probe, calls, events, ops, marks):
    """The traced events with the measured kernels' own allocations in place; the convolution
    bytes those measurements cover; how far they raise the step's running peak."""
    templates = probe.measure(calls)
    measured_conv = sum(c["convolutionBytes"] for c in calls
                        if c["signature"] is not None and templates.get(c["signature"]) is not None)
    spans = kernel_spans(calls, templates)
    if not spans:
        return events, ops, marks, measured_conv, 0
    before = running_peak(events)
    events, ops, marks = with_transients(events, ops, marks, spans, len(events) + 1)
    return events, ops, marks, measured_conv, max(0, running_peak(events) - before)


def same_draws(torch):
    """Every traced step draws the same random numbers (the shadows' random ops, numpy's masks such
    as wav2vec2's SpecAugment): traces of one model are reproducible and batches compare."""
    torch.manual_seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)
    import random

    random.seed(0)


def unique_keys(events, ops):
    """The tracker's keys are object ids, which Python reuses once an object is freed; each
    allocation gets its own token instead (a free names the token live for its key), so two traces
    of one model compare event by event however ids were reused."""
    live, out, mapped, count = {}, [], {}, 0
    for index, event in enumerate(events):
        op = ops.get(index)
        if op is not None:
            mapped[index] = (op[0], op[1], [live.get(key) for key in op[2]])
        if event[0] == "a":
            count += 1
            live[event[1]] = count
            out.append(("a", count) + tuple(event[2:]))
        else:
            out.append(("f", live.pop(event[1], None)))
    return out, mapped


def save_events(path, traced, workspaces):
    """The traced allocation order (bench only: the allocator model is developed on it offline)."""
    events = [[e[0], e[1]] + list(e[2:3]) for e in traced["events"]]
    ops = {str(i): [name, bw, keys] for i, (name, bw, keys) in traced["ops"].items()}
    with open(path, "w") as handle:
        json.dump({"events": events, "marks": traced["marks"], "workspaces": workspaces, "ops": ops}, handle)


class Replayer(object):
    """A traced (or interpolated) step replayed as a real trial runs it: the weights, three steps and
    the eval step through the allocator model; and the device total the trace tier reports, by the
    same rule as src/memory/trace-tier.ts traceEstimate (which recomputes it from these figures)."""

    def __init__(self, request, task, workspaces, device):
        self.settings = allocator_settings()
        self.capacity = request.get("allocatorCapacityBytes")
        self.steps = 1 if task == "infer" else 3
        self.workspaces = workspaces
        self.cuda = device == "cuda"

    def point(self, traced):
        events = accumulate_in_place(traced["events"], traced["ops"])
        replayed = replay(step_sequence(events, traced["marks"], self.steps, self.workspaces, traced["ops"]),
                          expandable=self.settings["expandableSegments"], capacity=self.capacity)
        state = traced["marks"]["state"]
        return {
            "batch": traced["batch"],
            "interpolated": traced.get("interpolated"),
            "trackerPeakBytes": traced["peak"],
            "peakAllocatedBytes": traced["peak"] + sum(self.workspaces),
            "breakdown": dict(traced["breakdown"], temporaries=traced["breakdown"]["temporaries"] + sum(self.workspaces)),
            "allocator": {
                "peakReservedBytes": int(replayed.peak_reserved),
                "peakAllocatedBytes": int(replayed.peak_allocated),
                "outOfMemory": bool(replayed.oom),
                "capacityBytes": self.capacity,
                "expandableSegments": self.settings["expandableSegments"],
                "events": len(traced["events"]),
                "stepAllocatedBytes": sum(e[2] for e in traced["events"][state:] if e[0] == "a"),
                "convolutionBytes": traced["convolutionBytes"],
            },
        }

    @staticmethod
    def total(point, budget):
        """trace-tier.ts traceEstimate's totalBytes, from the same figures."""
        allocator = point["allocator"]
        peak = max(point["peakAllocatedBytes"], allocator["peakAllocatedBytes"])
        reserved = max(allocator["peakReservedBytes"], peak)
        step = allocator["stepAllocatedBytes"]
        share = min(1, float(allocator["convolutionBytes"]) / step) if step else 0
        fraction = budget["safetyFraction"] + budget["convolutionFraction"] * share
        return reserved + int(math.ceil(reserved * fraction)) + budget["contextBytes"]


class BatchSearch(object):
    """The largest batch in search["min"]..search["max"] whose trace-tier total fits
    search["usableBytes"], in one process and few traces. Every allocation's exact size is affine in
    the batch (activations scale with it; weights, gradients and optimizer states do not), so two
    traces at adjacent batches whose allocations match one for one give any other batch's step
    without tracing it: its sizes interpolated, replayed through the allocator model. The answer is
    then traced for real and must match the interpolation; where it does not (a size that is not
    affine, an op that changes with the batch), only real traces decide from there. Also the batch
    where the allocator model alone, without the safety share, reaches the limit: where --measure
    starts."""

    MAX_REAL_TRACES = 8

    def __init__(self, step_at, replayer, search):
        self.step_at, self.replayer, self.search = step_at, replayer, search
        self.low, self.high = int(search["min"]), int(search["max"])
        self.traced, self.points = {}, {}
        self.pair = None
        self.real_traces = 0

    def run(self, first):
        started = time.time()
        self.traced[first["batch"]] = first
        self.pair = self.find_pair(first) if self.low < self.high else None
        answer = self.largest(self.low, self.high, self.search)
        verified = self.verify(answer)
        if not verified and self.pair is not None:
            self.pair = None
            self.points = {b: p for b, p in self.points.items() if b in self.traced}
            answer = self.largest(*self.traced_bracket(), budget=self.search)
        likely = None
        if self.pair is not None and answer is not None:
            likely = self.largest(answer, self.high, dict(self.search, safetyFraction=0.0))
        for batch in self.search.get("curve") or []:
            if self.low <= batch <= self.high and (self.pair is not None or batch in self.traced):
                self.point(batch)
        return {
            "maxBatch": answer,
            "likelyMaxBatch": likely,
            "interpolatedFrom": [t["batch"] for t in self.pair] if self.pair else None,
            "verified": verified,
            "traces": len(self.traced),
            "traceSeconds": [self.traced[b]["seconds"] for b in sorted(self.traced)],
            "seconds": round(time.time() - started, 3),
            "points": [self.points[b] for b in sorted(self.points)],
        }

    def find_pair(self, first):
        """Two traced steps at adjacent batches that match allocation for allocation: the batch asked
        and the next, else the next two (batch 1 often takes other paths: squeezed dimensions)."""
        step = 1 if first["batch"] + 2 <= self.high else -1
        second = self.trace(first["batch"] + step)
        if aligned(first, second):
            return tuple(sorted((first, second), key=lambda t: t["batch"]))
        if not 1 <= first["batch"] + 2 * step:
            return None
        third = self.trace(first["batch"] + 2 * step)
        if aligned(second, third):
            return tuple(sorted((second, third), key=lambda t: t["batch"]))
        return None

    def trace(self, batch):
        if batch not in self.traced:
            self.real_traces += 1
            self.traced[batch] = self.step_at(batch)
        return self.traced[batch]

    def point(self, batch):
        if batch not in self.points:
            step = self.traced.get(batch)
            if step is None and self.pair is not None:
                step = synthesize(self.pair[0], self.pair[1], batch, self.replayer.cuda)
            if step is None:
                step = self.trace(batch)
            self.points[batch] = self.replayer.point(step)
        return self.points[batch]

    def total(self, batch, budget):
        return Replayer.total(self.point(batch), budget)

    def fits(self, batch, budget):
        return self.total(batch, budget) <= self.search["usableBytes"]

    def largest(self, lo, hi, budget):
        """The largest fitting batch in lo..hi, where lo fits and hi does not: the secant of the
        totals guesses the edge and its neighbour settles it; a guess that does not halve the
        bracket is followed by a bisection step (the allocator's segments make totals step)."""
        usable = self.search["usableBytes"]
        if not self.fits(lo, budget):
            return None
        if self.fits(hi, budget):
            return hi
        secant = True
        while hi - lo > 1:
            if self.pair is None and self.real_traces >= self.MAX_REAL_TRACES:
                break
            width = hi - lo
            guess = (lo + hi) // 2
            low_total, high_total = self.total(lo, budget), self.total(hi, budget)
            if secant and high_total > low_total:
                guess = lo + int((usable - low_total) * (hi - lo) // (high_total - low_total))
            guess = min(hi - 1, max(lo + 1, guess))
            if self.fits(guess, budget):
                lo = guess
                if guess + 1 < hi and not self.fits(guess + 1, budget):
                    hi = guess + 1
            else:
                hi = guess
                if guess - 1 > lo and self.fits(guess - 1, budget):
                    lo = guess - 1
            secant = 2 * (hi - lo) <= width
        return lo

    def verify(self, answer):
        """The answer (or, where nothing fits, the smallest batch) traced for real; with an
        interpolation, its allocations must be the ones interpolated."""
        batch = self.low if answer is None else answer
        if batch in self.traced:
            return True
        step = self.trace(batch)
        expected = synthesize(self.pair[0], self.pair[1], batch, self.replayer.cuda) if self.pair else None
        same = expected is not None and aligned(step, expected) and all(
            a[0] != "a" or a[3] == b[3] for a, b in zip(step["events"], expected["events"]))
        self.points[batch] = self.replayer.point(step)
        return same

    def traced_bracket(self):
        fitting = [b for b in self.traced if self.fits(b, self.search)]
        lo = max(fitting) if fitting else self.low
        above = [b for b in self.traced if b > lo and not self.fits(b, self.search)]
        return lo, min(above) if above else self.high


def aligned(one, two):
    """Two traced steps whose allocations and frees match one for one (sizes aside)."""
    if len(one["events"]) != len(two["events"]) or one["marks"] != two["marks"] or one["ops"] != two["ops"]:
        return False
    return all(a[0] == b[0] and a[1] == b[1] for a, b in zip(one["events"], two["events"]))


def synthesize(low, high, batch, cuda):
    """The step at `batch` from traced steps at two adjacent batches: each allocation's exact bytes
    extended along the line through its two sizes; the tracker's figure rounded as MemTracker rounds
    CUDA storages (512 B). None where a size would turn negative (not affine)."""
    steps = batch - low["batch"]
    span = high["batch"] - low["batch"]
    if span != 1:
        return None

    def along(one, two):
        return one + (two - one) * steps

    events = []
    for one, two in zip(low["events"], high["events"]):
        if one[0] != "a":
            events.append(one)
            continue
        exact = along(one[3], two[3])
        if exact < 0:
            return None
        events.append(("a", one[1], (exact + 511) // 512 * 512 if cuda else exact, exact))
    return {"batch": batch, "events": events, "ops": low["ops"], "marks": low["marks"],
            "breakdown": {k: max(0, along(low["breakdown"][k], high["breakdown"][k])) for k in low["breakdown"]},
            "peak": running_peak(events), "interpolated": [low["batch"], high["batch"]],
            "convolutionBytes": max(0, along(low["convolutionBytes"], high["convolutionBytes"])), "seconds": 0}


def running_peak(events):
    """The most bytes held at once along the events (the tracker's figure, event by event)."""
    held, peak, sizes = 0, 0, {}
    for event in events:
        if event[0] == "a":
            sizes[event[1]] = event[2]
            held += event[2]
            peak = max(peak, held)
        elif event[1] in sizes:
            held -= sizes.pop(event[1])
    return peak


@contextlib.contextmanager
def lengths_as_lists(torch):
    """ctc_loss's length tensors reach its int-list overload as fake tensors, which the op's argument
    parser refuses before any dispatch mode sees them; their values (real shadows) go as lists."""
    functional = torch.nn.functional
    original = functional.ctc_loss

    def as_list(value):
        real = getattr(value, SHADOW, None) if isinstance(value, torch.Tensor) else None
        if real is None:
            return value
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes():
            return [int(v) for v in real.reshape(-1).tolist()]

    def ctc_loss(log_probs, targets, input_lengths, target_lengths, *args, **kwargs):
        inputs, labels = as_list(input_lengths), as_list(target_lengths)
        if isinstance(inputs, list) != isinstance(labels, list):
            # One of them without real values: at its largest, which is what gpuprep's unpadded
            # batches have (every frame of every sample; every label position).
            samples = log_probs.shape[1] if log_probs.dim() == 3 else 1
            if not isinstance(inputs, list):
                inputs = [int(log_probs.shape[0])] * samples
            if not isinstance(labels, list):
                per_sample = targets.shape[-1] if targets.dim() == 2 else -(-targets.numel() // samples)
                labels = [int(per_sample)] * samples
        return original(log_probs, targets, inputs, labels, *args, **kwargs)

    functional.ctc_loss = ctc_loss
    try:
        yield
    finally:
        functional.ctc_loss = original


def conv_counter(torch, tracker, totals):
    """Bytes read by convolutions (forward and backward) during the traced step: cuDNN takes a
    workspace per convolution from the caching allocator and frees it at once, which fake tensors
    never do; the share of the step's allocations that convolutions read sizes the allowance the
    trace tier adds for them (ResNet-50: 11 % more reserved than its allocations alone explain)."""
    aten = torch.ops.aten
    convs = {aten.convolution.default, aten.convolution_backward.default}

    def before_op(func, args):
        if func in convs and tracker._depth:
            totals["convolutionBytes"] += sum(a.numel() * a.element_size() for a in args[:2] if isinstance(a, torch.Tensor))

    return before_op


def mark_once(tracker, name):
    tracker.marks.setdefault(name, len(tracker.events))


def fix_notes(fixes):
    notes = []
    if fixes.guessed:
        notes.append("%d data-dependent scalar(s) had no real value under fake tensors and were guessed" % fixes.guessed)
    if fixes.upper_bounds:
        notes.append("%d data-dependent size(s) taken at their largest (errs high)" % fixes.upper_bounds)
    for op in sorted(fixes.widened):
        notes.append("%s: the fake kernel refuses float32; shaped on bfloat16 copies" % op)
    return notes


def gpu_facts(torch):
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return {"name": props.name, "capability": "%d.%d" % (props.major, props.minor),
            "totalBytes": int(props.total_memory)}


def cublas_workspaces(torch, task):
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
    return [blas, lt] * threads


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
    history = device == "cuda" and bool(request.get("allocatorHistory")) and start_history(torch)
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
        # Memory outside the caching allocator: the process's nvidia-smi use less what torch reserves now.
        result["reservedNowBytes"] = int(torch.cuda.memory_reserved())
        if history:
            result["allocatorCheck"] = replay_history(torch, request.get("historyOut"))
    else:
        # CPU trials exist to test the search without a GPU; the process's peak RSS stands in.
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        result.update({"peakAllocatedBytes": rss, "peakReservedBytes": rss, "deviceUsedBytes": None,
                       "deviceTotalBytes": None, "device": "cpu"})
    return result


def start_history(torch):
    """Record the real allocator's alloc/free events (bench: checks the allocator model on them)."""
    try:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=4000000)
        return True
    except Exception:
        return False


def replay_history(torch, path=None):
    """The real run's own allocation order replayed through AllocatorModel, beside the real peaks."""
    try:
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
    except Exception as error:
        return {"error": one_line(error)}
    if path:
        save_history(snapshot, path)
    events, counts = [], {}
    for entry in (snapshot.get("device_traces") or [[]])[0]:
        action = entry.get("action")
        counts[action] = counts.get(action, 0) + 1
        if action == "alloc":
            events.append(("a", entry["addr"], entry["size"]))
        elif action == "free_completed":
            events.append(("f", entry["addr"]))
    allocator = allocator_settings()
    model = replay(events, expandable=allocator["expandableSegments"])
    return {"events": len(events), "actions": counts, "modelPeakReservedBytes": int(model.peak_reserved),
            "modelPeakAllocatedBytes": int(model.peak_allocated)}


def save_history(snapshot, path):
    """The real allocation history, compact (bench only): [action, addr, size, stream, frames id],
    frames as "function@file:line" of the three innermost Python frames, listed once."""
    frames, rows = {}, []
    for entry in (snapshot.get("device_traces") or [[]])[0]:
        stack = "<".join("%s@%s:%s" % (f.get("name"), os.path.basename(f.get("filename") or ""), f.get("line"))
                         for f in [f for f in (entry.get("frames") or [])
                                   if not (f.get("filename") or "").endswith("nn/modules/module.py")][:3])
        rows.append([entry.get("action"), entry.get("addr"), entry.get("size"), entry.get("stream"),
                     frames.setdefault(stack, len(frames))])
    with open(path, "w") as handle:
        json.dump({"rows": rows, "frames": sorted(frames, key=frames.get)}, handle)


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
