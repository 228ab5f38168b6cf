#!/usr/bin/env python3
"""Price every step llama-server logged with a profile's formulas (docs/calibrate.md §4, "Per step").

    scripts/llamaserver/steps.py SERVER.LOG PROFILE.yaml [--gap SECONDS]

SERVER.LOG is llama-server's stderr with scripts/llamaserver/ubatch-log.py's UBLOG lines,
PROFILE.yaml an agentsim profile (calibrate's twin.yaml). The ubatches are grouped into steps (a
ubatch of the full 512 tokens is followed by the rest of its batch), and the steps into segments
that idle gaps longer than --gap (2 s) separate: a calibrate check's server runs, each after
its flush. For every segment it prints, for decode steps (every sequence one token) and for steps
that compute a prompt, the time they took (from a step's start to the next's, so the sampling
and the server's loop are in it), what the profile's MixedStep prices them at
(internal/engine/profile.go: decode_* terms for the sequences decoding, holding their length in
the KV; prefill_* terms for the prompts' tokens over the positions they start at; the pool term
over the decoding sequences' KV and the other prompts'), the ratio, and the
prefill_attn_pool_ns that would price the prompt steps right (least squares through 0 of what
the rest does not price on the pool pairs). Python 3, no packages.
"""
import re
import sys


def parse(path):
    for line in open(path, errors="replace"):
        if not line.startswith("UBLOG "):
            continue
        d = dict(kv.split("=", 1) for kv in line.split()[1:])
        seqs = []
        for s in filter(None, d["seqs"].split(",")):
            sid, rest = s.split(":")
            n, pos = rest.split("@")
            seqs.append((int(sid), int(n), int(pos)))
        mem = {}
        for s in filter(None, d["mem"].split(",")):
            sid, n = s.split(":")
            mem[int(sid)] = int(n)
        yield dict(t=int(d["t_us"]) / 1e6, dt=int(d["dt_us"]) / 1e6, n=int(d["n_tokens"]), seqs=seqs, mem=mem)


UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def profile(path):
    """The profile's keys this script prices with, durations in seconds and the _ns keys in ns."""
    p = {}
    for line in open(path):
        m = re.match(r"^([a-z_0-9]+):\s*([^#\s]+)", line)
        if m:
            p[m[1]] = m[2]

    def dur(key):
        v = p.get(key, "0")
        if re.fullmatch(r"[0-9.eE+-]+", v):
            return float(v) * 1e-9  # a bare number is nanoseconds, as Go's time.Duration
        total = 0.0
        for num, unit in re.findall(r"([0-9.]+)(ns|µs|us|ms|s|m|h)", v):
            total += float(num) * UNITS[unit]
        return total

    def ns(key):
        return float(p.get(key, "0")) * 1e-9

    return dict(db=dur("decode_base"), dps=dur("decode_per_seq"), dkv=ns("decode_per_kv_token_ns"),
                dskv=ns("decode_per_seq_kv_token_ns"), dms=dur("decode_multi_seq"), pb=dur("prefill_base"), ppt=dur("prefill_per_token"),
                pat=ns("prefill_attn_per_token2_ns"), pool=ns("prefill_attn_pool_ns"))


def price(p, step):
    """What the profile prices a step at without the pool term, and the step's pool pairs."""
    toks, start = {}, {}
    for x in step:
        for q, k, pos in x["seqs"]:
            toks[q] = toks.get(q, 0) + k
            start[q] = min(start.get(q, 1 << 60), pos)
    mem = step[-1]["mem"]
    dec = [q for q in toks if toks[q] == 1]
    chunks = [(toks[q], start[q]) for q in toks if toks[q] > 1]
    kv = sum(mem.get(q, 0) for q in dec)
    b = len(dec)
    t = p["db"] + p["dps"] * b + p["dkv"] * kv + p["dskv"] * b * kv + (p["dms"] if b >= 2 else 0)
    pairs = 0.0
    if chunks:
        t += p["pb"] + p["ppt"] * sum(c for c, _ in chunks) + p["pat"] * sum(c * (pos + c / 2) for c, pos in chunks)
        priors, before = sum(pos for _, pos in chunks), 0
        for c, pos in chunks:
            pairs += c * (kv + priors - pos + before)
            before += c
    return t, pairs, bool(chunks), len(toks)


def main():
    args = sys.argv[1:]
    gap = 2.0
    if "--gap" in args:
        i = args.index("--gap")
        gap = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    ubs = list(parse(args[0]))
    if not ubs:
        sys.exit(f"{args[0]}: no UBLOG lines (was llama-server patched by ubatch-log.py and run with LLAMA_UBATCH_LOG=1?)")
    p = profile(args[1])
    steps = []
    for i, x in enumerate(ubs):
        if not steps or ubs[i - 1]["n"] < 512:
            steps.append([])
        steps[-1].append(x)
    t0 = ubs[0]["t"]
    segments, cur = [], []
    for j in range(len(steps) - 1):
        took = steps[j + 1][0]["t"] - steps[j][0]["t"]
        busy = sum(x["dt"] for x in steps[j])
        if took - busy > gap:  # the server idled after this step: the segment ends here
            cur.append((steps[j], busy))
            segments.append(cur)
            cur = []
            continue
        cur.append((steps[j], took))
    if cur:
        segments.append(cur)
    print("from_s   span_s  seqs  decode steps: n  took_s  priced_s  ratio   prompt steps: n  took_s  priced_s  ratio  pool_ns_that_fits")
    for seg in segments:
        stats = {False: [0, 0.0, 0.0], True: [0, 0.0, 0.0]}
        xy = xx = 0.0
        seqs = 0
        for step, took in seg:
            t, pairs, prompt, n = price(p, step)
            seqs = max(seqs, n)
            s = stats[prompt]
            s[0] += 1
            s[1] += took
            s[2] += t + p["pool"] * pairs
            if prompt:
                xy += pairs * (took - t)
                xx += pairs * pairs
        d, q = stats[False], stats[True]
        start = seg[0][0][0]["t"] - t0
        span = seg[-1][0][-1]["t"] + seg[-1][0][-1]["dt"] - seg[0][0][0]["t"]
        fits = f"{xy / xx * 1e9:.1f}" if xx > 0 else "-"
        ratio = lambda s: f"{s[2] / s[1]:.3f}" if s[1] > 0 else "-"
        print(f"{start:7.1f}  {span:7.1f}  {seqs:4d}  {d[0]:17d}  {d[1]:6.2f}  {d[2]:8.2f}  {ratio(d):>5}  {q[0]:16d}  {q[1]:6.2f}  {q[2]:8.2f}  {ratio(q):>5}  {fits:>17}")


if __name__ == "__main__":
    main()
