"""Converts a GGUF model to the folder vLLM loads on CPU: float32 safetensors, its config,
tokenizer and chat template. vLLM reads GGUF only through a plugin whose dequantizing op
runs on CUDA alone, so `scripts/vllm start` serves this folder instead.

    python scripts/vllm_model.py MODEL.gguf OUT_DIR

The weights are the GGUF's, dequantized by transformers (its GGUF reader needs the `gguf`
package), so the model is the one llama.cpp runs, up to the quantization's rounding.
transformers will not save a model it read from GGUF, so the tensors are written here.
"""
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer


def main() -> None:
    gguf, out = sys.argv[1], sys.argv[2]
    folder, name = os.path.split(os.path.abspath(gguf))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        # One tensor under two names: safetensors stores it once, as the embeddings.
        tensors.pop("lm_head.weight", None)
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(model).__name__]
    config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    print(out)


if __name__ == "__main__":
    main()
