#!/usr/bin/env python3
"""Make llama-server log every ubatch it computes (docs/calibrate.md §4, "Per step").

    scripts/llamaserver/ubatch-log.py LLAMA_CPP_DIR

patches LLAMA_CPP_DIR/src/llama-context.cpp (a llama.cpp source tree, as scripts/llamaserver/check.sh
builds it) so that, with LLAMA_UBATCH_LOG set in its environment, llama-server writes one line to
stderr per ubatch of llama_context::decode:

    UBLOG t_us=… dt_us=… n_tokens=… n_outputs=… n_kv=… used=… seqs=S:N@P,… mem=S:N,…

t_us is when the ubatch began (ggml_time_us), dt_us how long it took to compute (to
ggml_backend_sched_synchronize), n_kv the cells its attention spans (llama_kv_cache::get_n_kv:
up to the last cell in use, padded to 256), used the cells the sequences hold, seqs each
sequence's tokens in the ubatch (N tokens from position P), mem each sequence's length in the
KV. Without LLAMA_UBATCH_LOG nothing changes but one test of a static flag. Rebuild after:
cmake --build build --target llama-server. scripts/llamaserver/steps.py reads the lines.
"""
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
path = sys.argv[1] + "/src/llama-context.cpp"
src = open(path).read()
if "UBLOG" in src:
    sys.exit(f"{path} is already patched")
include = '#include "llama-memory.h"\n'
call = "        const auto * res = process_ubatch(ubatch, ctx_type_to_graph_type(cparams.ctx_type), mctx.get(), status);\n"
for what, text in (("the include of llama-memory.h", include), ("llama_context::decode's call of process_ubatch", call)):
    if src.count(text) != 1:
        sys.exit(f"{path}: {what} is not where this patch expects it (a llama.cpp of another version?)")
src = src.replace(include, include + '#include "llama-kv-cache.h"\n#include <cstdlib>\n#include <map>\n', 1)
src = src.replace(call, '''        static const bool ublog = getenv("LLAMA_UBATCH_LOG") != nullptr; // UBLOG
        const int64_t ub_t0 = ggml_time_us();
''' + call + '''        if (ublog) {
            ggml_backend_sched_synchronize(sched.get());
            const int64_t ub_t1 = ggml_time_us();
            uint32_t ub_nkv = 0;
            if (auto * kvc = dynamic_cast<const llama_kv_cache_context *>(mctx.get())) { ub_nkv = kvc->get_n_kv(); }
            std::map<int, std::pair<int,int>> ub_seqs;
            for (uint32_t i = 0; i < ubatch.n_tokens; i++) {
                const int sid = ubatch.seq_id[i][0];
                auto it = ub_seqs.find(sid);
                if (it == ub_seqs.end()) { ub_seqs[sid] = {1, (int) ubatch.pos[i]}; }
                else { it->second.first++; it->second.second = std::min(it->second.second, (int) ubatch.pos[i]); }
            }
            long ub_used = 0; std::string ub_mem;
            for (uint32_t sq = 0; sq < cparams.n_seq_max; sq++) {
                const llama_pos pmin = memory->seq_pos_min(sq), pmax = memory->seq_pos_max(sq);
                if (pmax >= 0) { ub_used += pmax - pmin + 1; ub_mem += std::to_string(sq) + ":" + std::to_string(pmax - pmin + 1) + ","; }
            }
            std::string ub_s;
            for (auto & kv : ub_seqs) { ub_s += std::to_string(kv.first) + ":" + std::to_string(kv.second.first) + "@" + std::to_string(kv.second.second) + ","; }
            fprintf(stderr, "UBLOG t_us=%lld dt_us=%lld n_tokens=%u n_outputs=%d n_kv=%u used=%ld seqs=%s mem=%s\\n",
                (long long) ub_t0, (long long) (ub_t1 - ub_t0), ubatch.n_tokens, (int) n_outputs, ub_nkv, ub_used, ub_s.c_str(), ub_mem.c_str());
        }
''', 1)
open(path, "w").write(src)
print(f"patched {path}: rebuild llama-server, and run it with LLAMA_UBATCH_LOG=1")
