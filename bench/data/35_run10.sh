#!/usr/bin/env bash
# bench/35 run 10: main at 489caf7 (p.tar.xz: the pools packed into several buffers) on the row run 9
# could not allocate (256 columns at 1025 keys: 6240 MiB of KV, one buffer's limit 4094 MiB), by q
# head (LFM2_ATTN_KV_KEYS=100000) and by the rule (kv head at 64+ decode columns); carry .gl, .dev-35.
D=.dev-35; (cd $D && mkdir -p p && cd p && tar -xJf ../p.tar.xz)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for E in LFM2_ATTN_KV_KEYS=100000 LFM2_NONE=1; do
    echo "== $E lfm2-1.2b cols 256 pos 1024 --wide"
    env $E timeout 90 $D/p/lfm2-profile-stage --model lfm2-1.2b --layers 0:16 --cols 256 --pos 1024 --wide --reps 3 2>&1 | grep -E "GPU busy|^  attn|engine"
done 2>&1 | tee $OUT/35_run10.txt
echo "(${SECONDS}s)"
