"""Accuracy of gpuprep memory's estimates against real training steps on the GPU.

Every cell (a model, a batch, a sequence length, the work) runs in a FRESH subprocess that
  1. traces one step on fake CUDA tensors with src/memory/memory.py (the trace tier),
  2. takes accelerate's `estimate-memory` training figure for the same model (built on meta),
  3. runs 3 real steps + an eval step on the GPU with random weights (the truth:
     torch.cuda.max_memory_allocated / max_memory_reserved, and device-level use).
Seed 001's rule (scale the smallest batch's measured use to 85 % of the card) is computed after,
per model and sequence length. Models are built from config: nothing is downloaded.

usage:
  python3 bench/memory/accuracy.py run --out FILE.jsonl [--summary FILE.json] [--workers 3] [--dry]
  python3 bench/memory/accuracy.py summary FILE.jsonl
  python3 bench/memory/accuracy.py retrace FILE.jsonl --out NEW.jsonl [--summary S.json] [--workers 8]
      the trace tier again on an earlier run's cells (same machine kind), keeping their truth
--dry: tiny configs, trial and trace on the CPU: checks the whole pipeline on a machine without a GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MEMORY_PY_DIRS = [os.path.join(HERE, "..", "..", "src", "memory"), os.path.join(HERE, "..", "..", "dist", "src", "memory")]
GIB = 1024 ** 3


def configs(dry):
    """HF config dicts (model_type + fields), built with transformers' config classes' defaults."""
    if dry:
        return {
            "gpt2-tiny": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_head": 4,
                          "n_layer": 2, "n_positions": 256, "vocab_size": 512},
            "llama-tiny": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
                           "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                           "num_key_value_heads": 2, "vocab_size": 512},
            "vit-tiny": {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 64,
                         "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                         "image_size": 32, "patch_size": 8, "num_labels": 10},
        }
    return {
        "gpt2-small": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]},
        "gpt2-medium": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 1024, "n_layer": 24,
                        "n_head": 16},
        # TinyLlama-1.1B's shape (GQA 32/4).
        "llama-1.1b": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
                       "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
                       "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048},
        # Qwen2-0.5B's shape (GQA 14/2, vocabulary 151936, tied embeddings).
        "qwen2-0.5b": {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896,
                       "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
                       "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
                       "max_position_embeddings": 4096},
        "bert-base": {"model_type": "bert", "architectures": ["BertForMaskedLM"]},
        "t5-small": {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 512,
                     "d_ff": 2048, "num_layers": 6, "num_heads": 8, "vocab_size": 32128,
                     "decoder_start_token_id": 0, "pad_token_id": 0, "eos_token_id": 1},
        "vit-b16": {"model_type": "vit", "architectures": ["ViTForImageClassification"], "num_labels": 1000},
        "resnet-50": {"model_type": "resnet", "architectures": ["ResNetForImageClassification"],
                      "depths": [3, 4, 6, 3], "hidden_sizes": [256, 512, 1024, 2048], "layer_type": "bottleneck",
                      "embedding_size": 64, "num_labels": 1000},
        # Issue 24's fit set: families the trace could not follow before, at public models' shapes.
        "opt-350m": {"model_type": "opt", "architectures": ["OPTForCausalLM"], "hidden_size": 1024, "ffn_dim": 4096,
                     "num_hidden_layers": 24, "num_attention_heads": 16, "word_embed_proj_dim": 512,
                     "do_layer_norm_before": False, "vocab_size": 50272, "max_position_embeddings": 2048},
        "mixtral-mini": {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "hidden_size": 1024,
                         "intermediate_size": 3584, "num_hidden_layers": 8, "num_attention_heads": 16,
                         "num_key_value_heads": 4, "num_local_experts": 8, "num_experts_per_tok": 2,
                         "vocab_size": 32000, "max_position_embeddings": 4096},
        "whisper-small": {"model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"],
                          "d_model": 768, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 12,
                          "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                          "num_mel_bins": 80, "vocab_size": 51865, "decoder_start_token_id": 50258},
        "convnext-tiny": {"model_type": "convnext", "architectures": ["ConvNextForImageClassification"],
                          "depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768], "num_labels": 1000},
        "deberta-v3-base": {"model_type": "deberta-v2", "architectures": ["DebertaV2ForMaskedLM"],
                            "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                            "intermediate_size": 3072, "vocab_size": 128100, "relative_attention": True,
                            "position_buckets": 256, "norm_rel_ebd": "layer_norm", "share_att_key": True,
                            "pos_att_type": ["p2c", "c2p"], "max_relative_positions": -1,
                            "position_biased_input": False, "type_vocab_size": 0},
        # Issue 24's held-out set: none of these families is in any fitted cell.
        "pythia-410m": {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "hidden_size": 1024,
                        "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
                        "vocab_size": 50304, "rotary_pct": 0.25, "max_position_embeddings": 2048},
        "gemma-2b": {"model_type": "gemma", "architectures": ["GemmaForCausalLM"], "hidden_size": 2048,
                     "intermediate_size": 16384, "num_hidden_layers": 18, "num_attention_heads": 8,
                     "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 256000},
        "phi3-mini": {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 3072,
                      "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 32,
                      "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096},
        "mistral-mini": {"model_type": "mistral", "architectures": ["MistralForCausalLM"], "hidden_size": 2048,
                         "intermediate_size": 7168, "num_hidden_layers": 12, "num_attention_heads": 16,
                         "num_key_value_heads": 8, "vocab_size": 32768},
        "qwen3-0.6b": {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024,
                       "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
                       "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True},
        "swin-tiny": {"model_type": "swin", "architectures": ["SwinForImageClassification"], "embed_dim": 96,
                      "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24], "window_size": 7, "num_labels": 1000},
        "roberta-base": {"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "vocab_size": 50265,
                         "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1},
        "bart-base": {"model_type": "bart", "architectures": ["BartForConditionalGeneration"], "d_model": 768,
                      "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
                      "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                      "vocab_size": 50265},
        "wav2vec2-base": {"model_type": "wav2vec2", "architectures": ["Wav2Vec2ForCTC"], "vocab_size": 32,
                          "do_stable_layer_norm": False, "feat_extract_norm": "group"},
        "clip-b32": {"model_type": "clip", "architectures": ["CLIPModel"]},
        "falcon-mini": {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 2048,
                        "num_hidden_layers": 8, "num_attention_heads": 32, "num_kv_heads": 1,
                        "new_decoder_architecture": False, "multi_query": True, "vocab_size": 65024},
        "stablelm-mini": {"model_type": "stablelm", "architectures": ["StableLmForCausalLM"], "hidden_size": 2048,
                          "intermediate_size": 5632, "num_hidden_layers": 8, "num_attention_heads": 32,
                          "num_key_value_heads": 32, "vocab_size": 50304},
        "distilbert": {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"]},
        "gpt-bigcode-mini": {"model_type": "gpt_bigcode", "architectures": ["GPTBigCodeForCausalLM"], "n_embd": 1536,
                             "n_layer": 8, "n_head": 12, "multi_query": True, "vocab_size": 49152, "n_positions": 4096},
        "bloom-560m": {"model_type": "bloom", "architectures": ["BloomForCausalLM"], "hidden_size": 1024,
                       "n_layer": 24, "n_head": 16, "vocab_size": 250880},
        # Issue 24, second held-out call: more families none of the fitted cells has.
        "phi-mini": {"model_type": "phi", "architectures": ["PhiForCausalLM"], "hidden_size": 2048,
                     "intermediate_size": 8192, "num_hidden_layers": 6, "num_attention_heads": 32,
                     "vocab_size": 51200, "partial_rotary_factor": 0.5},
        "olmo2-mini": {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"], "hidden_size": 2048,
                       "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 16,
                       "num_key_value_heads": 16, "vocab_size": 100352},
        "granite-mini": {"model_type": "granite", "architectures": ["GraniteForCausalLM"], "hidden_size": 2048,
                         "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "vocab_size": 49155},
        "albert-base": {"model_type": "albert", "architectures": ["AlbertForMaskedLM"], "hidden_size": 768,
                        "num_attention_heads": 12, "intermediate_size": 3072, "embedding_size": 128},
        "electra-base": {"model_type": "electra", "architectures": ["ElectraForMaskedLM"], "hidden_size": 768,
                         "num_attention_heads": 12, "intermediate_size": 3072, "embedding_size": 768},
        "deit-base": {"model_type": "deit", "architectures": ["DeiTForImageClassification"], "num_labels": 1000},
        "mobilenet-v2": {"model_type": "mobilenet_v2", "architectures": ["MobileNetV2ForImageClassification"],
                         "num_labels": 1001},
        "hubert-base": {"model_type": "hubert", "architectures": ["HubertForCTC"], "vocab_size": 32},
        # Issue 24, third held-out set (after the allocator model's segment addresses changed on the
        # cells above): families in neither the fit nor the held-out sets, at public models' shapes.
        "gptj-mini": {"model_type": "gptj", "architectures": ["GPTJForCausalLM"], "n_embd": 2048, "n_layer": 8,
                      "n_head": 16, "rotary_dim": 64, "vocab_size": 50400, "n_positions": 2048},
        "codegen-mini": {"model_type": "codegen", "architectures": ["CodeGenForCausalLM"], "n_embd": 1024,
                         "n_layer": 12, "n_head": 16, "rotary_dim": 32, "vocab_size": 51200, "n_positions": 2048,
                         "n_ctx": 2048},
        "xglm-mini": {"model_type": "xglm", "architectures": ["XGLMForCausalLM"], "d_model": 1024, "num_layers": 12,
                      "attention_heads": 16, "ffn_dim": 4096, "vocab_size": 256008},
        "starcoder2-mini": {"model_type": "starcoder2", "architectures": ["Starcoder2ForCausalLM"],
                            "hidden_size": 1536, "intermediate_size": 6144, "num_hidden_layers": 8,
                            "num_attention_heads": 12, "num_key_value_heads": 2, "vocab_size": 49152,
                            "bos_token_id": 0, "eos_token_id": 0},
        "cohere-mini": {"model_type": "cohere", "architectures": ["CohereForCausalLM"], "hidden_size": 1024,
                        "intermediate_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 16,
                        "num_key_value_heads": 16, "vocab_size": 256000},
        "gemma2-mini": {"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "hidden_size": 1024,
                        "intermediate_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 8,
                        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 256000},
        "olmo-mini": {"model_type": "olmo", "architectures": ["OlmoForCausalLM"], "hidden_size": 2048,
                      "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 16,
                      "vocab_size": 50304},
        "mpnet-base": {"model_type": "mpnet", "architectures": ["MPNetForMaskedLM"]},
        "megatron-bert-mini": {"model_type": "megatron-bert", "architectures": ["MegatronBertForMaskedLM"],
                               "hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 16,
                               "intermediate_size": 4096, "vocab_size": 29056},
        "pegasus-mini": {"model_type": "pegasus", "architectures": ["PegasusForConditionalGeneration"],
                         "d_model": 768, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
                         "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                         "vocab_size": 96103},
        "m2m100-mini": {"model_type": "m2m_100", "architectures": ["M2M100ForConditionalGeneration"],
                        "d_model": 768, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
                        "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                        "vocab_size": 128112},
        "beit-base": {"model_type": "beit", "architectures": ["BeitForImageClassification"], "num_labels": 1000},
        "dinov2-base": {"model_type": "dinov2", "architectures": ["Dinov2ForImageClassification"],
                        "image_size": 224, "num_labels": 1000},
        "efficientnet-b7": {"model_type": "efficientnet", "architectures": ["EfficientNetForImageClassification"],
                            "image_size": 224, "num_labels": 1000},
        "regnet-y": {"model_type": "regnet", "architectures": ["RegNetForImageClassification"], "num_labels": 1000},
        "data2vec-audio-base": {"model_type": "data2vec-audio", "architectures": ["Data2VecAudioForCTC"],
                                "vocab_size": 32},
        # Issue 24, fourth held-out set (after the replay order's cuBLAS workspaces moved to each
        # thread's first matmul): families in none of the sets above, at public models' shapes.
        "mpt-mini": {"model_type": "mpt", "architectures": ["MptForCausalLM"], "d_model": 2048, "n_layers": 8,
                     "n_heads": 16, "vocab_size": 50432, "max_seq_len": 2048},
        "gpt-neo-mini": {"model_type": "gpt_neo", "architectures": ["GPTNeoForCausalLM"], "hidden_size": 1024,
                         "num_layers": 12, "num_heads": 16, "attention_types": [[["global", "local"], 6]],
                         "vocab_size": 50257, "max_position_embeddings": 2048},
        "biogpt-mini": {"model_type": "biogpt", "architectures": ["BioGptForCausalLM"], "hidden_size": 1024,
                        "num_hidden_layers": 12, "num_attention_heads": 16, "intermediate_size": 4096,
                        "vocab_size": 42384, "max_position_embeddings": 1024},
        "mbart-mini": {"model_type": "mbart", "architectures": ["MBartForConditionalGeneration"], "d_model": 768,
                       "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
                       "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                       "vocab_size": 250027},
        "funnel-base": {"model_type": "funnel", "architectures": ["FunnelForMaskedLM"]},
        "segformer-b0": {"model_type": "segformer", "architectures": ["SegformerForImageClassification"],
                         "num_labels": 1000},
        "poolformer-s12": {"model_type": "poolformer", "architectures": ["PoolFormerForImageClassification"],
                           "num_labels": 1000},
        "levit-128s": {"model_type": "levit", "architectures": ["LevitForImageClassification"], "num_labels": 1000},
        # Issue 24, fifth held-out set (every op's own memory measured, not a fixed list): families in
        # none of the sets above, each at its config class's defaults (the public base/tiny shapes).
        "squeezebert-base": {"model_type": "squeezebert", "architectures": ["SqueezeBertForMaskedLM"]},
        "roformer-base": {"model_type": "roformer", "architectures": ["RoFormerForMaskedLM"]},
        "mobilevit-small": {"model_type": "mobilevit", "architectures": ["MobileViTForImageClassification"],
                            "num_labels": 1000},
        "convnextv2-tiny": {"model_type": "convnextv2", "architectures": ["ConvNextV2ForImageClassification"],
                            "num_labels": 1000},
        "bit-50": {"model_type": "bit", "architectures": ["BitForImageClassification"], "num_labels": 1000},
        "swinv2-tiny": {"model_type": "swinv2", "architectures": ["Swinv2ForImageClassification"], "num_labels": 1000},
        "cvt-13": {"model_type": "cvt", "architectures": ["CvtForImageClassification"], "num_labels": 1000},
        "focalnet-tiny": {"model_type": "focalnet", "architectures": ["FocalNetForImageClassification"],
                          "num_labels": 1000},
    }


IMAGE_TYPES = ("vit", "resnet", "convnext", "swin", "deit", "mobilenet_v2", "beit", "dinov2", "efficientnet", "regnet",
               "segformer", "poolformer", "levit", "mobilevit", "convnextv2", "bit", "swinv2", "cvt", "focalnet")


def plan_issue24(which):
    """Issue 24's cells: "fit" (device call 1: the allocator model and the context are checked and
    fitted on these) and "holdout" (call 2: families in no fitted cell, never used to fit)."""
    lora = {"rank": 16, "alpha": 32, "dropout": 0.05, "targets": ["q_proj", "v_proj"]}
    bf16_lora = {"task": "finetune-lora", "lora": lora, "dtype": "bfloat16"}
    if which == "fit":
        return [
            ("gpt2-small", {}, [4, 16], [1024], False),
            ("gpt2-small", {"amp": None, "optimizer": "sgd"}, [8], [1024], False),
            ("llama-1.1b", {}, [2], [1024], False),
            ("llama-1.1b", bf16_lora, [8], [1024], False),
            ("qwen2-0.5b", {"gradCheckpointing": True}, [8], [1024], False),
            ("bert-base", {}, [32], [512], False),
            ("t5-small", {}, [32], [512], False),
            ("vit-b16", {}, [64], [None], False),
            ("resnet-50", {}, [128], [None], False),
            ("opt-350m", {}, [8], [1024], False),
            ("mixtral-mini", {}, [4], [1024], False),
            ("mixtral-mini", {"dtype": "bfloat16", "amp": None}, [4], [1024], False),
            ("whisper-small", {}, [8], [448], False),
            ("convnext-tiny", {}, [64], [None], False),
            ("deberta-v3-base", {}, [16], [512], False),
            ("gpt2-small", {}, [48], [1024], True),
        ]
    plain = {}
    if which == "holdout2":
        return [
            ("gptj-mini", plain, [4], [1024], False),
            ("codegen-mini", plain, [8], [1024], False),
            ("codegen-mini", {"gradCheckpointing": True}, [16], [1024], False),
            ("xglm-mini", plain, [4], [1024], False),
            ("starcoder2-mini", plain, [8], [1024], False),
            ("starcoder2-mini", bf16_lora, [8], [2048], False),
            ("cohere-mini", plain, [4], [1024], False),
            ("gemma2-mini", plain, [4], [1024], False),
            ("olmo-mini", plain, [4], [1024], False),
            ("mpnet-base", plain, [32], [512], False),
            ("megatron-bert-mini", plain, [16], [512], False),
            ("pegasus-mini", plain, [16], [512], False),
            ("m2m100-mini", plain, [16], [512], False),
            ("beit-base", plain, [64], [None], False),
            ("dinov2-base", plain, [64], [None], False),
            ("efficientnet-b7", plain, [64], [None], False),
            ("regnet-y", plain, [128], [None], False),
            ("data2vec-audio-base", plain, [8], [500], False),
        ]
    if which == "holdout3":
        return [
            ("mpt-mini", plain, [4], [1024], False),
            ("gpt-neo-mini", plain, [8], [1024], False),
            ("biogpt-mini", plain, [8], [1024], False),
            ("mbart-mini", plain, [8], [512], False),
            ("funnel-base", plain, [16], [512], False),
            ("segformer-b0", plain, [128], [None], False),
            ("poolformer-s12", plain, [128], [None], False),
            ("levit-128s", plain, [128], [None], False),
        ]
    if which == "holdout4":
        return [
            ("squeezebert-base", plain, [16], [512], False),
            ("roformer-base", plain, [16], [512], False),
            ("mobilevit-small", plain, [64], [None], False),
            ("convnextv2-tiny", plain, [64], [None], False),
            ("bit-50", plain, [64], [None], False),
            ("swinv2-tiny", plain, [64], [None], False),
            ("cvt-13", plain, [64], [None], False),
            ("focalnet-tiny", plain, [64], [None], False),
        ]
    if which == "dev":
        # Issue 24's second call: fit families (already used to fit the allocator's safety share),
        # rerun with their real allocation history, on which the allocator model is developed.
        return [
            ("gpt2-small", {}, [16], [1024], False),
            ("llama-1.1b", bf16_lora, [8], [1024], False),
            ("bert-base", {}, [32], [512], False),
            ("t5-small", {}, [32], [512], False),
            ("vit-b16", {}, [64], [None], False),
            ("resnet-50", {}, [128], [None], False),
            ("opt-350m", {}, [8], [1024], False),
            ("convnext-tiny", {}, [64], [None], False),
        ]
    return [
        ("pythia-410m", plain, [4, 16], [1024], False),
        ("pythia-410m", {"gradCheckpointing": True}, [16], [2048], False),
        ("gemma-2b", bf16_lora, [4], [1024], False),
        ("gemma-2b", {"dtype": "bfloat16", "amp": None}, [2], [1024], False),
        ("phi3-mini", plain, [2], [1024], False),
        ("phi3-mini", dict(bf16_lora, lora=dict(lora, targets=["qkv_proj", "o_proj"])), [4], [2048], False),
        ("mistral-mini", plain, [2, 6], [1024], False),
        ("mistral-mini", bf16_lora, [8], [2048], False),
        ("qwen3-0.6b", plain, [4], [1024], False),
        ("qwen3-0.6b", {"gradCheckpointing": True}, [16], [1024], False),
        ("swin-tiny", plain, [32, 128], [None], False),
        ("roberta-base", plain, [16, 64], [512], False),
        ("bart-base", plain, [16], [512], False),
        ("wav2vec2-base", plain, [8], [500], False),
        ("clip-b32", plain, [64], [77], False),
        ("falcon-mini", plain, [4], [1024], False),
        ("stablelm-mini", plain, [4], [1024], False),
        ("distilbert", plain, [32], [512], False),
        ("gpt-bigcode-mini", plain, [4, 8], [1024], False),
        ("bloom-560m", plain, [4], [1024], False),
        ("bloom-560m", {"amp": None, "optimizer": "sgd"}, [2], [512], False),
        ("phi-mini", plain, [4], [1024], False),
        ("olmo2-mini", plain, [4], [1024], False),
        ("granite-mini", bf16_lora, [8], [1024], False),
        ("albert-base", plain, [32], [512], False),
        ("electra-base", plain, [32], [512], False),
        ("deit-base", plain, [64], [None], False),
        ("mobilenet-v2", plain, [128], [None], False),
        ("hubert-base", plain, [8], [500], False),
        ("pythia-410m", plain, [40], [1024], True),
    ]


def cells(dry, which="issue13"):
    """(model, work overrides, batches, seq lens or image sizes, solo?) - solo cells may near 80 GB."""
    base = {"task": "train", "amp": "bf16", "dtype": "float32", "optimizer": "adamw", "gradCheckpointing": False,
            "lora": None, "evalStep": True}
    if dry:
        plan = [
            ("gpt2-tiny", {}, [1, 4], [64], False),
            ("llama-tiny", {"task": "finetune-lora", "lora": {"rank": 4, "alpha": 8, "targets": ["q_proj", "v_proj"]}},
             [2], [64], False),
            ("vit-tiny", {"gradCheckpointing": True}, [4], [None], False),
        ]
    elif which in ("fit", "holdout", "dev", "holdout2", "holdout3", "holdout4"):
        plan = plan_issue24(which)
    else:
        lora = {"rank": 16, "alpha": 32, "targets": ["q_proj", "v_proj"]}
        plan = [
            ("gpt2-small", {}, [1, 4, 8, 16], [512], False),
            ("gpt2-small", {}, [1, 4, 8], [1024], False),
            ("gpt2-small", {}, [16, 32, 64], [1024], True),
            ("gpt2-small", {"amp": None, "optimizer": "sgd"}, [4], [1024], False),
            ("gpt2-medium", {}, [1, 4], [1024], False),
            ("gpt2-medium", {}, [8], [1024], True),
            ("gpt2-medium", {"gradCheckpointing": True}, [8, 16], [1024], False),
            ("llama-1.1b", {}, [1, 2], [1024], False),
            ("llama-1.1b", {}, [4], [1024], True),
            ("llama-1.1b", {"task": "finetune-lora", "lora": lora}, [4, 8], [1024], False),
            ("qwen2-0.5b", {}, [1, 4], [1024], False),
            ("qwen2-0.5b", {}, [16], [1024], True),
            ("qwen2-0.5b", {"gradCheckpointing": True}, [8], [1024], False),
            ("bert-base", {}, [8, 32], [128, 512], False),
            ("t5-small", {}, [8, 32], [512], False),
            ("vit-b16", {}, [16, 64], [None], False),
            ("resnet-50", {}, [32, 128], [None], False),
        ]
    out = []
    for model, overrides, batches, lengths, solo in plan:
        for length in lengths:
            for batch in batches:
                work = dict(base, **overrides)
                image = configs(dry)[model]["model_type"] in IMAGE_TYPES
                work["seqLen"] = None if image else length
                work["imageSize"] = (32 if dry else 224) if image else None
                out.append({"model": model, "work": work, "batch": batch, "solo": solo})
    for cell in out:
        key = json.dumps([cell["model"], cell["work"], cell["batch"]], sort_keys=True)
        cell["id"] = "%08x" % zlib.crc32(key.encode())
        # Issue 13: half the cells held out of any fitting (fit-formula.mjs reads "split"); issue 24: by set.
        cell["split"] = which if which in ("fit", "holdout", "dev", "holdout2", "holdout3", "holdout4") else ("holdout" if zlib.crc32(key.encode()) % 2 else "fit")
    return out


# ---------------------------------------------------------------- one cell, in its own process


def load_memory_module():
    for directory in MEMORY_PY_DIRS:
        if os.path.exists(os.path.join(directory, "memory.py")):
            sys.path.insert(0, os.path.abspath(directory))
            import memory

            return memory
    raise SystemExit("memory.py not found beside the bench")


def run_cell(cell, dry):
    memory = load_memory_module()
    import torch

    config_dict = configs(dry)[cell["model"]]
    work = cell["work"]
    request = cell_request(cell, dry)
    device = "cpu" if dry else "cuda"
    record = {"model": cell["model"], "task": work["task"], "amp": work["amp"], "dtype": work["dtype"],
              "optimizer": work["optimizer"], "gradCheckpointing": work["gradCheckpointing"], "lora": work["lora"],
              "batch": cell["batch"], "seqLen": work["seqLen"], "imageSize": work["imageSize"],
              "split": cell["split"], "id": cell["id"]}
    trace = trace_into(record, memory, request, device)
    record["accelerate"] = accelerate_estimate(config_dict, work)
    started = time.time()
    truth = memory.run(dict(request, mode="trial", device=device, steps=3, allocatorHistory=not dry))
    record["trialSeconds"] = round(time.time() - started, 2)
    record["parameterCount"] = truth.get("parameterCount") or trace.get("parameterCount")
    record["trainableParameterCount"] = truth.get("trainableParameterCount") or trace.get("trainableParameterCount")
    record["truth"] = {k: truth.get(k) for k in ("status", "peakAllocatedBytes", "peakReservedBytes", "stepMs",
                                                 "deviceUsedBytes", "deviceTotalBytes", "processUsedBytes", "error",
                                                 "reservedNowBytes", "allocatorCheck", "errorKind")}
    record["trialNotes"] = truth.get("notes")
    record["truth"]["status"] = truth.get("status")
    record["device"] = truth.get("device")
    record["torch"] = torch.__version__
    record["config"] = full_config(config_dict)
    return record


def cell_request(cell, dry):
    config_dict = configs(dry)[cell["model"]]
    path = "/tmp/gpuprep-bench-%s.json" % cell["id"]
    with open(path, "w") as handle:
        json.dump(config_dict, handle)
    return dict(cell["work"], batch=cell["batch"], source={"kind": "config", "path": path})


def trace_into(record, memory, request, device):
    """The trace tier's figure for one cell, written into its record (request may carry eventsOut)."""
    started = time.time()
    trace = memory.run(dict(request, mode="trace", traceDevice=device))
    record["traceSeconds"] = round(time.time() - started, 2)
    record["trace"] = ({"peakAllocatedBytes": trace["peakAllocatedBytes"], "breakdown": trace["breakdown"],
                        "trackerPeakBytes": trace.get("trackerPeakBytes"), "device": trace.get("traceDevice"),
                        "allocator": trace.get("allocator"), "notes": trace.get("notes")}
                       if trace.get("status") == "ok" else None)
    record["traceError"] = None if trace.get("status") == "ok" else (trace.get("error") or trace.get("reason"))
    record["traceStatus"] = trace.get("status")
    return trace


def retrace_cell(cell, dry):
    """Only the trace tier, for `retrace`: the truth of a cell does not change with gpuprep's code."""
    memory = load_memory_module()
    import torch
    import transformers

    record = {"id": cell["id"]}
    trace_into(record, memory, cell_request(cell, dry), "cpu" if dry else "cuda")
    record["retraced"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                          "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return record


def retrace_all(args):
    """Recompute the trace figures of an earlier run's cells (in parallel: fake tensors need no GPU
    memory to speak of) and keep each cell's measured truth, accelerate figure and seed rule."""
    records = [json.loads(l) for l in open(args.arg) if l.strip()]
    by_id = {r["id"]: r for r in records if "id" in r}
    todo = [c for c in cells(args.dry) if c["id"] in by_id]
    running = []
    done = 0
    while todo or running:
        while todo and len(running) < args.workers:
            cell = todo.pop(0)
            command = [sys.executable, os.path.abspath(__file__), "trace-cell", json.dumps(cell)] + (
                ["--dry"] if args.dry else [])
            running.append((cell, subprocess.Popen(command, stdout=subprocess.PIPE, universal_newlines=True)))
        cell, proc = running.pop(0)
        try:
            stdout, _ = proc.communicate(timeout=args.cell_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
        lines = [l for l in (stdout or "").splitlines() if l.startswith("{")]
        fresh = json.loads(lines[-1]) if lines else {"trace": None, "traceError": "exited %s" % proc.returncode}
        record = by_id[cell["id"]]
        previous = record.get("trace")
        record.update({k: v for k, v in fresh.items() if k != "id"})
        record["previousTrace"] = previous
        done += 1
        sys.stderr.write("retraced %s b=%s (%d)\n" % (cell["model"], cell["batch"], done))
    with open(args.out, "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    summary = summarize(records)
    if args.summary:
        with open(args.summary, "w") as handle:
            json.dump(summary, handle, indent=2)
    print(json.dumps(summary, indent=2))


def full_config(config_dict):
    try:
        import transformers

        fields = dict(config_dict)
        return transformers.AutoConfig.for_model(fields.pop("model_type"), **fields).to_dict()
    except Exception:
        return config_dict


def accelerate_estimate(config_dict, work):
    """accelerate estimate-memory's figures, computed as its command does (accelerate.commands.estimate)."""
    try:
        import torch
        import transformers
        from accelerate import init_empty_weights
        from accelerate.commands.estimate import calculate_maximum_sizes, estimate_training_usage

        fields = dict(config_dict)
        config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
        cls = getattr(transformers, config_dict["architectures"][0])
        with init_empty_weights():
            model = cls._from_config(config)
        total, _ = calculate_maximum_sizes(model)
        row = "float32" if not work["amp"] else ("bfloat16" if work["amp"] == "bf16" else "float16")
        training = estimate_training_usage(total, row)
        return {"trainingBytes": int(max(training.values())), "loadBytes": int(total), "row": row}
    except Exception as error:
        return {"error": "%s: %s" % (type(error).__name__, str(error)[:200])}


# ---------------------------------------------------------------- the driver


def run_all(args):
    todo = cells(args.dry, args.set)
    if args.only:
        todo = [c for c in todo if c["model"] in args.only.split(",")]
    pooled = [c for c in todo if not c["solo"]]
    solo = [c for c in todo if c["solo"]]
    records = []
    deadline = time.time() + args.budget
    out = open(args.out, "w")

    def launch(cell):
        command = [sys.executable, os.path.abspath(__file__), "cell", json.dumps(cell)] + (["--dry"] if args.dry else [])
        log = open("%s.%s.log" % (args.out, cell["id"]), "w")
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, universal_newlines=True), time.time()

    def finish(cell, proc, started):
        try:
            stdout, _ = proc.communicate(timeout=max(1, args.cell_timeout - (time.time() - started)))
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
        line = [l for l in (stdout or "").splitlines() if l.startswith("{")]
        if line:
            record = json.loads(line[-1])
        else:
            record = {"model": cell["model"], "batch": cell["batch"], "id": cell["id"], "split": cell["split"],
                      "truth": {"status": "error", "error": "cell process exited %s" % proc.returncode}}
        record["wallSeconds"] = round(time.time() - started, 1)
        record["ranAlone"] = cell in solo or cell in retry
        records[:] = [r for r in records if r.get("id") != record.get("id")]
        records.append(record)
        out.write(json.dumps(record) + "\n")
        out.flush()
        sys.stderr.write("%s %s b=%s %s %.0fs\n" % (record.get("model"), record.get("seqLen") or record.get("imageSize"),
                                                    record.get("batch"), record["truth"].get("status"), record["wallSeconds"]))

    retry = []
    running = []
    queue = list(pooled)
    while queue or running:
        while queue and len(running) < args.workers and time.time() < deadline:
            cell = queue.pop(0)
            running.append((cell,) + launch(cell))
        if not running:
            break
        cell, proc, started = running.pop(0)
        finish(cell, proc, started)
    # A pooled cell that ran out of memory may have lost it to a neighbour: run it again alone.
    retry[:] = [c for c in pooled if any(r.get("id") == c["id"] and r["truth"].get("status") == "oom" for r in records)]
    for cell in solo + retry:  # near the card's size: alone, so no neighbour takes its memory
        if time.time() > deadline:
            break
        proc, started = launch(cell)
        finish(cell, proc, started)
    out.close()
    add_seed_rule(records)
    with open(args.out, "w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    summary = summarize(records)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.summary:
        with open(args.summary, "w") as handle:
            handle.write(text + "\n")


def group_key(record):
    return json.dumps([record.get(k) for k in ("model", "task", "amp", "optimizer", "gradCheckpointing", "seqLen",
                                               "imageSize")])


def add_seed_rule(records):
    """Seed 001's rule from each group's smallest measured batch: maxBatch = b x 0.85 total / used."""
    groups = {}
    for record in records:
        groups.setdefault(group_key(record), []).append(record)
    for members in groups.values():
        # The process's own use (nvidia-smi per process): cells share the GPU, so device-level use is not it.
        ok = [r for r in members if r["truth"].get("status") == "ok" and r["truth"].get("processUsedBytes")]
        if not ok:
            continue
        base = min(ok, key=lambda r: r["batch"])
        used = base["truth"]["processUsedBytes"]
        total = base["truth"].get("deviceTotalBytes") or 0
        predicted = int(base["batch"] * 0.85 * total // used) if used else None
        for record in members:
            record["seedRule"] = {"fromBatch": base["batch"], "fromUsedBytes": used, "predictedMaxBatch": predicted,
                                  "predictedPeakAllocatedBytes": int(base["truth"]["peakAllocatedBytes"] *
                                                                     record["batch"] / base["batch"])}


def pct(estimate, truth):
    return 100.0 * (estimate - truth) / truth


def quantile(values, q):
    if not values:
        return None
    values = sorted(values)
    index = min(len(values) - 1, int(round(q * (len(values) - 1))))
    return round(values[index], 2)


def summarize(records, usable_fraction=0.95):
    tiers = {"trace": [], "accelerate": [], "seedRule": []}
    holdout = {"trace": [], "accelerate": [], "seedRule": []}
    unsafe = {"trace": 0, "accelerate": 0, "seedRule": 0}
    rows = []
    for r in records:
        truth = r.get("truth") or {}
        total = truth.get("deviceTotalBytes") or 80 * GIB
        estimates = {
            "trace": (r.get("trace") or {}).get("peakAllocatedBytes"),
            "accelerate": (r.get("accelerate") or {}).get("trainingBytes"),
            "seedRule": (r.get("seedRule") or {}).get("predictedPeakAllocatedBytes"),
        }
        if truth.get("status") == "ok" and truth.get("peakAllocatedBytes"):
            for tier, value in estimates.items():
                if tier == "seedRule" and (r.get("seedRule") or {}).get("fromBatch") == r.get("batch"):
                    continue  # the rule's own starting cell: zero error by construction
                if value:
                    error = pct(value, truth["peakAllocatedBytes"])
                    tiers[tier].append(abs(error))
                    if r.get("split") == "holdout":
                        holdout[tier].append(abs(error))
            rows.append({"model": r.get("model"), "batch": r.get("batch"), "len": r.get("seqLen") or r.get("imageSize"),
                         "gc": r.get("gradCheckpointing"), "task": r.get("task"),
                         "truthGiB": round(truth["peakAllocatedBytes"] / GIB, 3),
                         "reservedGiB": round((truth.get("peakReservedBytes") or 0) / GIB, 3),
                         **{t + "Pct": (round(pct(v, truth["peakAllocatedBytes"]), 2) if v else None)
                            for t, v in estimates.items()}})
        if truth.get("status") == "oom":
            # "Fits" as gpuprep judges: estimate x (1 + reserve) + context under the usable memory.
            for tier, value in estimates.items():
                if tier == "seedRule":
                    predicted = (r.get("seedRule") or {}).get("predictedMaxBatch")
                    if predicted is not None and r["batch"] <= predicted:
                        unsafe[tier] += 1
                elif value and value < usable_fraction * total:
                    unsafe[tier] += 1
    # What the caching allocator holds above the allocated peak, and the CUDA context beside it
    # (the process's nvidia-smi use minus reserved): the two terms gpuprep adds to the trace figure.
    reserve = [100.0 * (r["truth"]["peakReservedBytes"] - r["truth"]["peakAllocatedBytes"]) / r["truth"]["peakAllocatedBytes"]
               for r in records if (r.get("truth") or {}).get("status") == "ok" and r["truth"].get("peakReservedBytes")]
    context = [(r["truth"]["processUsedBytes"] - r["truth"]["peakReservedBytes"]) / 2 ** 20 for r in records
               if (r.get("truth") or {}).get("status") == "ok" and r["truth"].get("processUsedBytes")]
    return {
        "reserveAboveAllocatedPct": {"median": quantile(reserve, 0.5), "p95": quantile(reserve, 0.95),
                                     "max": quantile(reserve, 1.0)},
        "cudaContextMiB": {"median": quantile(context, 0.5), "min": quantile(context, 0.0), "max": quantile(context, 1.0)},
        "cells": len(records),
        "ok": sum(1 for r in records if (r.get("truth") or {}).get("status") == "ok"),
        "oom": sum(1 for r in records if (r.get("truth") or {}).get("status") == "oom"),
        "errors": sum(1 for r in records if (r.get("truth") or {}).get("status") not in ("ok", "oom")),
        "all": {t: {"n": len(v), "medianAbsPct": quantile(v, 0.5), "p95AbsPct": quantile(v, 0.95)} for t, v in tiers.items()},
        "holdout": {t: {"n": len(v), "medianAbsPct": quantile(v, 0.5), "p95AbsPct": quantile(v, 0.95)}
                    for t, v in holdout.items()},
        "fitsButOomed": unsafe,
        "rows": rows,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["run", "cell", "summary", "retrace", "trace-cell"])
    parser.add_argument("arg", nargs="?")
    parser.add_argument("--out")
    parser.add_argument("--summary")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--budget", type=float, default=330, help="seconds after which no new cell starts")
    parser.add_argument("--cell-timeout", type=float, default=150)
    parser.add_argument("--only")
    parser.add_argument("--set", default="issue13", choices=["issue13", "fit", "holdout"])
    parser.add_argument("--dry", action="store_true")
    args = parser.parse_args()
    if args.command == "cell":
        cell = json.loads(args.arg)
        try:
            record = run_cell(cell, args.dry)
        except Exception as error:
            record = {"model": cell["model"], "batch": cell["batch"], "id": cell["id"], "split": cell["split"],
                      "truth": {"status": "error", "error": "%s: %s" % (type(error).__name__, str(error)[:300])}}
        sys.stdout.flush()
        print(json.dumps(record, default=str))
    elif args.command == "trace-cell":
        cell = json.loads(args.arg)
        try:
            record = retrace_cell(cell, args.dry)
        except Exception as error:
            record = {"id": cell["id"], "trace": None, "traceError": "%s: %s" % (type(error).__name__, str(error)[:300])}
        sys.stdout.flush()
        print(json.dumps(record, default=str))
    elif args.command == "retrace":
        retrace_all(args)
    elif args.command == "summary":
        records = [json.loads(l) for l in open(args.arg) if l.strip()]
        print(json.dumps(summarize(records), indent=2))
    else:
        run_all(args)


if __name__ == "__main__":
    main()
