#!/usr/bin/env python3
"""make_seeds.py - writes the fuzz targets' small models (tests/fuzz/data) and seed corpora
(tests/fuzz/corpus/<target>). Small shapes (hidden 8, vocab 16) keep every execution cheap;
the values are arbitrary non-zero numbers (describe/bind and the golden checks never look at
weight values). Run from anywhere: python3 tests/fuzz/make_seeds.py"""
import json, os, random, struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA, CORPUS = os.path.join(HERE, "data"), os.path.join(HERE, "corpus")
rng = random.Random(11)

def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n

def values(dtype, n):
    if dtype == "F32":
        return struct.pack("<%df" % n, *[rng.uniform(-1, 1) or 0.5 for _ in range(n)])
    if dtype == "F16":
        return struct.pack("<%de" % n, *[rng.uniform(-1, 1) or 0.5 for _ in range(n)])
    if dtype == "I32":
        return struct.pack("<%di" % n, *[rng.randrange(16) for _ in range(n)])
    raise ValueError(dtype)

def safetensors(tensors, meta=None):
    """tensors: list of (name, dtype, shape[, raw bytes])."""
    header, data = {}, b""
    for t in tensors:
        name, dtype, shape = t[:3]
        raw = t[3] if len(t) > 3 else values(dtype, numel(shape))
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data

H, V, F = 8, 16, 16

def lfm2_tensors():
    hd, nh, nkv = 4, 2, 1
    t = [("model.embed_tokens.weight", "F16", [V, H]), ("model.embedding_norm.weight", "F32", [H])]
    for l, kind in enumerate(["conv", "full_attention"]):
        p = "model.layers.%d." % l
        t += [(p + "operator_norm.weight", "F32", [H]), (p + "ffn_norm.weight", "F32", [H]),
              (p + "feed_forward.w1.weight", "F16", [F, H]), (p + "feed_forward.w3.weight", "F16", [F, H]),
              (p + "feed_forward.w2.weight", "F16", [H, F])]
        if kind == "conv":
            t += [(p + "conv.in_proj.weight", "F16", [3 * H, H]), (p + "conv.conv.weight", "F32", [H, 1, 3]),
                  (p + "conv.out_proj.weight", "F16", [H, H])]
        else:
            t += [(p + "self_attn.q_proj.weight", "F16", [nh * hd, H]), (p + "self_attn.k_proj.weight", "F16", [nkv * hd, H]),
                  (p + "self_attn.v_proj.weight", "F16", [nkv * hd, H]), (p + "self_attn.out_proj.weight", "F16", [H, nh * hd]),
                  (p + "self_attn.q_layernorm.weight", "F32", [hd]), (p + "self_attn.k_layernorm.weight", "F32", [hd])]
    return t

LFM2_CONFIG = {"model_type": "lfm2", "hidden_size": H, "num_hidden_layers": 2, "num_attention_heads": 2,
               "num_key_value_heads": 1, "intermediate_size": F, "vocab_size": V, "conv_L_cache": 3,
               "layer_types": ["conv", "full_attention"], "full_attn_idxs": None, "norm_eps": 1e-5,
               "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
               "max_position_embeddings": 128, "tie_word_embeddings": True}

def qwen35_tensors():
    hd, nh, nkv, nk, nv, dk, dv, K = 8, 2, 1, 1, 2, 4, 4, 4
    C = 2 * nk * dk + nv * dv
    t = [("model.language_model.embed_tokens.weight", "F16", [V, H]), ("model.language_model.norm.weight", "F32", [H])]
    for l, kind in enumerate(["linear_attention", "full_attention"]):
        p = "model.language_model.layers.%d." % l
        t += [(p + "input_layernorm.weight", "F32", [H]), (p + "post_attention_layernorm.weight", "F32", [H]),
              (p + "mlp.gate_proj.weight", "F16", [F, H]), (p + "mlp.up_proj.weight", "F16", [F, H]),
              (p + "mlp.down_proj.weight", "F16", [H, F])]
        if kind == "full_attention":
            t += [(p + "self_attn.q_proj.weight", "F16", [nh * 2 * hd, H]), (p + "self_attn.k_proj.weight", "F16", [nkv * hd, H]),
                  (p + "self_attn.v_proj.weight", "F16", [nkv * hd, H]), (p + "self_attn.o_proj.weight", "F16", [H, nh * hd]),
                  (p + "self_attn.q_norm.weight", "F32", [hd]), (p + "self_attn.k_norm.weight", "F32", [hd])]
        else:
            q = p + "linear_attn."
            t += [(q + "in_proj_qkv.weight", "F16", [C, H]), (q + "in_proj_z.weight", "F16", [nv * dv, H]),
                  (q + "in_proj_b.weight", "F16", [nv, H]), (q + "in_proj_a.weight", "F16", [nv, H]),
                  (q + "conv1d.weight", "F32", [C, 1, K]), (q + "dt_bias", "F32", [nv]), (q + "A_log", "F32", [nv]),
                  (q + "norm.weight", "F32", [dv]), (q + "out_proj.weight", "F16", [H, nv * dv])]
    t.append(("model.visual.patch_embed.proj.weight", "F32", [2, 1, 1, 1, 1]))  # a rank-5 tower tensor
    return t

QWEN35_CONFIG = {"model_type": "qwen3_5", "tie_word_embeddings": True, "text_config": {
    "model_type": "qwen3_5_text", "hidden_size": H, "head_dim": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "intermediate_size": F, "vocab_size": V, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 4, "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_value_head_dim": 4,
    "layer_types": ["linear_attention", "full_attention"], "rms_norm_eps": 1e-6, "partial_rotary_factor": 0.5,
    "rope_parameters": {"rope_theta": 10000000.0, "partial_rotary_factor": 0.5}, "max_position_embeddings": 128}}

def glm_tensors():
    hd, nh, nkv = 4, 2, 1
    t = [("model.language_model.embed_tokens.weight", "F16", [V, H]), ("model.language_model.norm.weight", "F32", [H]),
         ("lm_head.weight", "F16", [V, H])]
    for l in range(2):
        p = "model.language_model.layers.%d." % l
        t += [(p + n, "F32", [H]) for n in ("input_layernorm.weight", "post_self_attn_layernorm.weight",
                                             "post_attention_layernorm.weight", "post_mlp_layernorm.weight")]
        t += [(p + "mlp.gate_up_proj.weight", "F16", [2 * F, H]), (p + "mlp.down_proj.weight", "F16", [H, F]),
              (p + "self_attn.q_proj.weight", "F16", [nh * hd, H]), (p + "self_attn.k_proj.weight", "F16", [nkv * hd, H]),
              (p + "self_attn.v_proj.weight", "F16", [nkv * hd, H]), (p + "self_attn.o_proj.weight", "F16", [H, nh * hd])]
    return t

GLM_CONFIG = {"model_type": "glm_ocr", "tie_word_embeddings": False, "text_config": {
    "model_type": "glm_ocr_text", "hidden_size": H, "head_dim": 4, "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "intermediate_size": F, "vocab_size": V, "rms_norm_eps": 1e-5,
    "rope_parameters": {"rope_theta": 10000.0, "partial_rotary_factor": 1.0}, "max_position_embeddings": 128}}

# ---- GGUF (LFM2, F32/F16)
def gg_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b

def gguf_lfm2():
    kv = [("general.architecture", 8, gg_str("lfm2")), ("general.alignment", 4, struct.pack("<I", 32)),
          ("lfm2.context_length", 4, struct.pack("<I", 128)), ("lfm2.embedding_length", 4, struct.pack("<I", H)),
          ("lfm2.block_count", 4, struct.pack("<I", 2)), ("lfm2.feed_forward_length", 4, struct.pack("<I", F)),
          ("lfm2.attention.head_count", 4, struct.pack("<I", 2)),
          ("lfm2.attention.head_count_kv", 9, struct.pack("<IQii", 5, 2, 0, 1)),
          ("lfm2.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
          ("lfm2.rope.freq_base", 6, struct.pack("<f", 1e6)), ("lfm2.shortconv.l_cache", 4, struct.pack("<I", 3)),
          ("lfm2.vocab_size", 4, struct.pack("<I", V))]
    ts = [("token_embd.weight", 1, [V, H]), ("token_embd_norm.weight", 0, [H])]
    for l, kind in enumerate(["conv", "attn"]):
        p = "blk.%d." % l
        ts += [(p + "attn_norm.weight", 0, [H]), (p + "ffn_norm.weight", 0, [H]), (p + "ffn_gate.weight", 1, [F, H]),
               (p + "ffn_up.weight", 1, [F, H]), (p + "ffn_down.weight", 1, [H, F])]
        if kind == "conv":
            ts += [(p + "shortconv.in_proj.weight", 1, [3 * H, H]), (p + "shortconv.conv.weight", 0, [H, 3]),
                   (p + "shortconv.out_proj.weight", 1, [H, H])]
        else:
            ts += [(p + "attn_q.weight", 1, [8, H]), (p + "attn_k.weight", 1, [4, H]), (p + "attn_v.weight", 1, [4, H]),
                   (p + "attn_output.weight", 1, [H, 8]), (p + "attn_q_norm.weight", 0, [4]), (p + "attn_k_norm.weight", 0, [4])]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(kv))
    for k, t, v in kv:
        out += gg_str(k) + struct.pack("<I", t) + v
    off, blobs = 0, b""
    for name, typ, shape in ts:
        ne = list(reversed(shape))
        out += gg_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", typ, off)
        raw = values("F32" if typ == 0 else "F16", numel(shape))
        raw += b"\0" * (-len(raw) % 32)
        blobs += raw
        off += len(raw)
    out += b"\0" * (-len(out) % 32)
    return out + blobs

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

def main():
    lt = lfm2_tensors()
    for name, cfg, ts in (("lfm2", LFM2_CONFIG, lt), ("qwen35", QWEN35_CONFIG, qwen35_tensors()),
                          ("glm", GLM_CONFIG, glm_tensors())):
        write(os.path.join(DATA, name, "config.json"), json.dumps(cfg, indent=1))
        write(os.path.join(DATA, name, "model.safetensors"), safetensors(ts, {"format": "pt"}))
        write(os.path.join(CORPUS, "config", name + ".json"), json.dumps(cfg, indent=1))
    write(os.path.join(CORPUS, "safetensors", "lfm2.safetensors"), safetensors(lt, {"format": "pt"}))
    write(os.path.join(CORPUS, "gguf", "lfm2.gguf"), gguf_lfm2())
    # a sharded lfm2: shards in data/sharded, the index is the fuzzed input
    half = len(lt) // 2
    shards = {"model-00001-of-00002.safetensors": lt[:half], "model-00002-of-00002.safetensors": lt[half:]}
    wm = {}
    for f, ts in shards.items():
        write(os.path.join(DATA, "sharded", f), safetensors(ts))
        wm.update({t[0]: f for t in ts})
    write(os.path.join(DATA, "sharded", "config.json"), json.dumps(LFM2_CONFIG, indent=1))
    write(os.path.join(CORPUS, "index", "index.json"),
          json.dumps({"metadata": {"total_size": 1}, "weight_map": wm}, indent=1))
    # a golden for the whole small LFM2 (tokens [2, 4], hidden.0..2, logits)
    S, T = 2, 4
    g = [("tokens", "I32", [S, T])] + [("hidden.%d" % i, "F32", [S, T, H]) for i in range(3)]
    g.append(("logits", "F32", [S, T, V]))
    write(os.path.join(CORPUS, "golden", "golden.safetensors"), safetensors(g))

if __name__ == "__main__":
    main()
