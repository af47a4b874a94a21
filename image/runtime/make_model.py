"""Writes the tiny model directory the runtime image serves: a byte-level BPE tokenizer, a chat template and
a small llama-shaped config, generated at image build time so nothing is ever fetched from a hub.

The mocker engine needs a tokenizer and a config (it simulates the forward pass; there are no weights), the
frontend needs the tokenizer and the chat template to turn a chat request into tokens and back. Training a
few hundred merges on a fixed corpus takes well under a second and, with one thread, gives the same files on
every build (the image stays reproducible).

Usage (inside the image's virtualenv): python make_model.py <directory>
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# Fixed corpus: the merges (and so the token ids) depend only on this text.
CORPUS = [
    "Dynamo serves large language models on Kubernetes with disaggregated prefill and decode workers.",
    "The operator turns a DynamoGraphDeployment into Deployments, Services and their configuration.",
    "A frontend accepts OpenAI compatible chat completions and routes them to workers.",
    "The mocker engine simulates a worker: it schedules tokens without running a model on a GPU.",
    "Hello! How can I help you today? The quick brown fox jumps over the lazy dog.",
    "Kubernetes pods, services, probes, leases and jobs run on a real kubelet node.",
]
VOCAB_SIZE = 512
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ message['role'] }}: {{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"
)


def train_tokenizer(out: Path) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer=trainer)
    tok.save(str(out / "tokenizer.json"))
    return tok.get_vocab_size()


def write_configs(out: Path, vocab_size: int) -> None:
    bos, eos = 0, 1  # the first two special tokens, trained first
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": vocab_size,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "max_position_embeddings": 2048,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "torch_dtype": "float16",
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": SPECIAL[0],
        "eos_token": SPECIAL[1],
        "pad_token": SPECIAL[2],
        "model_max_length": 2048,
        "chat_template": CHAT_TEMPLATE,
    }
    generation = {"bos_token_id": bos, "eos_token_id": eos, "max_new_tokens": 64}
    for name, doc in (
        ("config.json", config),
        ("tokenizer_config.json", tokenizer_config),
        ("generation_config.json", generation),
    ):
        (out / name).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    os.environ["RAYON_NUM_THREADS"] = "1"  # one thread: the same merges on every build
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    vocab = train_tokenizer(out)
    write_configs(out, vocab)
    print(f"tiny model in {out}: vocabulary of {vocab} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
