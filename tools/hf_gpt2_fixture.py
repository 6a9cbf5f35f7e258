"""Record the Hugging Face fixture that tests/test_language_model.py checks gpt2_forward against.

Run it in a throwaway environment outside the repository, never in .venv (torch and transformers stay
out of the project's lock):

    python3 -m venv /tmp/hfenv
    /tmp/hfenv/bin/pip install torch==2.13.0       # the CPU build, from the local disk
    /tmp/hfenv/bin/pip install transformers safetensors
    /tmp/hfenv/bin/python tools/hf_gpt2_fixture.py tests/fixtures/hf_gpt2

It builds a small random GPT-2 in float64 (GPT2Config: 2 layers, 3 heads, n_embd 12, vocabulary 50,
context 16), moves every parameter off its initial value (biases 0 and LayerNorm gains 1 would hide
mistakes), and saves it twice with ``save_pretrained``: as ``GPT2LMHeadModel`` (tensor names with the
``transformer.`` prefix) in ``lm_head/`` and as ``GPT2Model`` (without) in ``model/``. On a few token
sequences it records the logits, the hidden states and the attention weights in ``outputs.npz``, and
the versions in ``versions.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import safetensors
import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel

SEQUENCES = ([1, 2, 3, 4, 5], [49, 0, 7, 7, 7, 13, 2, 40, 41, 3, 3], list(range(16)), [30])


def main(out: Path) -> None:
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=50, n_positions=16, n_embd=12, n_layer=2, n_head=3,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="eager")
    model = GPT2LMHeadModel(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out / "lm_head", safe_serialization=True)
    model.transformer.save_pretrained(out / "model", safe_serialization=True)
    record = {}
    with torch.no_grad():
        for k, seq in enumerate(SEQUENCES):
            ids = torch.tensor([seq])
            result = model(ids, output_hidden_states=True, output_attentions=True)
            record[f"tokens_{k}"] = np.array(seq, dtype=np.int64)
            record[f"logits_{k}"] = result.logits[0].numpy()
            record[f"hidden_states_{k}"] = np.stack([h[0].numpy() for h in result.hidden_states])
            record[f"attentions_{k}"] = np.stack([a[0].numpy() for a in result.attentions])
    np.savez_compressed(out / "outputs.npz", **record)
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "safetensors": safetensors.__version__, "numpy": np.__version__,
                "python": sys.version.split()[0]}
    (out / "versions.json").write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
