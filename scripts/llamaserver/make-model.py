#!/usr/bin/env python3
"""Write a tiny random-weight llama GGUF for calibrating against llama-server.

    make-model.py LLAMA_CPP_DIR OUT.gguf

LLAMA_CPP_DIR is a llama.cpp checkout (its gguf-py and models/ggml-vocab-llama-bpe.gguf are
used). The model is llama-shaped (embedding 128, 4 layers, 4 heads, feed-forward 384, context
32 768) with the Llama 3 vocabulary and chat template, so llama-server tokenizes and templates
as for a real Llama 3. Its weights are random but for two choices that make its replies
usable as load: dimension 0 of the residual stream is a constant (the embedding's column 0 is
4, and no layer writes to it), and the output rows of the tokens whose text is not whole UTF-8
and of every control token (end of turn among them) are zero while the others' column 0 is
positive, so a reply is printable text that runs to its max_tokens. The speed of such a model
is what llama-server's scheduler and kernels make of its shape, which is what calibrate fits.
"""
import sys

import numpy as np

llama, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, f"{llama}/gguf-py")
import gguf  # noqa: E402

EMBED, LAYERS, HEADS, FFN, CONTEXT = 128, 4, 4, 384, 32768

# The Llama 3 chat template, as its tokenizer_config.json has it without tools.
TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)

vocab = gguf.GGUFReader(f"{llama}/models/ggml-vocab-llama-bpe.gguf")


def field(name):
    f = vocab.fields[name]
    return [f.parts[i] for i in f.data]


tokens = [bytes(t).decode("utf-8") for t in field("tokenizer.ggml.tokens")]
merges = [bytes(m).decode("utf-8") for m in field("tokenizer.ggml.merges")]
types = [int(t[0]) for t in field("tokenizer.ggml.token_type")]
bos = int(vocab.fields["tokenizer.ggml.bos_token_id"].parts[-1][0])
eos = int(vocab.fields["tokenizer.ggml.eos_token_id"].parts[-1][0])

# GPT-2's byte-level alphabet: each byte is one printable character in the token's text.
printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
codes = printable[:]
n = 0
for b in range(256):
    if b not in printable:
        printable.append(b)
        codes.append(256 + n)
        n += 1
unbyte = {chr(c): b for b, c in zip(printable, codes)}


def whole_text(i):
    if types[i] != gguf.TokenType.NORMAL:
        return False
    try:
        raw = bytes(unbyte[ch] for ch in tokens[i])
        text = raw.decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return False
    return all(ch.isprintable() or ch in " \n\t" for ch in text)


good = np.array([whole_text(i) for i in range(len(tokens))])
rng = np.random.default_rng(7)


def rand(*shape, scale=0.02):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


w = gguf.GGUFWriter(out, "llama")
w.add_name("agentsim-tiny-llama")
w.add_context_length(CONTEXT)
w.add_embedding_length(EMBED)
w.add_block_count(LAYERS)
w.add_feed_forward_length(FFN)
w.add_head_count(HEADS)
w.add_head_count_kv(HEADS)
w.add_rope_dimension_count(EMBED // HEADS)
w.add_rope_freq_base(500000.0)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_vocab_size(len(tokens))
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("llama-bpe")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_bos_token_id(bos)
w.add_eos_token_id(eos)
w.add_add_bos_token(True)
w.add_chat_template(TEMPLATE)

embd = rand(len(tokens), EMBED, scale=1.0)
embd[:, 0] = 4.0
w.add_tensor("token_embd.weight", embd)
for layer in range(LAYERS):
    p = f"blk.{layer}."
    w.add_tensor(p + "attn_norm.weight", np.ones(EMBED, np.float32))
    for name in ("attn_q", "attn_k", "attn_v"):
        w.add_tensor(p + name + ".weight", rand(EMBED, EMBED))
    o = rand(EMBED, EMBED)
    o[0, :] = 0  # nothing writes residual dimension 0
    w.add_tensor(p + "attn_output.weight", o)
    w.add_tensor(p + "ffn_norm.weight", np.ones(EMBED, np.float32))
    w.add_tensor(p + "ffn_gate.weight", rand(FFN, EMBED))
    w.add_tensor(p + "ffn_up.weight", rand(FFN, EMBED))
    down = rand(EMBED, FFN)
    down[0, :] = 0
    w.add_tensor(p + "ffn_down.weight", down)
w.add_tensor("output_norm.weight", np.ones(EMBED, np.float32))
head = rand(len(tokens), EMBED, scale=1.0)
head[:, 0] = 3.0
head[~good] = 0
w.add_tensor("output.weight", head)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print(f"{out}: {len(tokens)} tokens, {int((~good).sum())} never sampled (not whole UTF-8, or control)")
