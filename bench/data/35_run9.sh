#!/usr/bin/env bash
# bench/35 run 9: run 8's one-column rows again as gap-probe walls (no timestamps; run 8's timestamped
# walls moved ±15 % between identical kernels), and the 256-column row at 1025 keys with room to run.
# Same binaries as run 8 (d.tar.xz old, r.tar.xz new); carry .gl, .dev-35.
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mkdir -p r && cd r && tar -xJf ../r.tar.xz)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for row in "lfm2-1.2b 0:16 1 256" "lfm2-1.2b 0:16 1 384" "glm-ocr 0:4 1 256" "lfm2-1.2b 0:16 64 64"; do
    set -- $row; w=; [ $3 -gt 8 ] && w=--wide
    for b in old new old new; do
        B=$D/lfm2-profile-stage; [ $b = new ] && B=$D/r/lfm2-profile-stage
        echo "== $b $1 cols $3 pos $4 $w: $(timeout 45 $B --model $1 --layers $2 --cols $3 --pos $4 $w --reps 5 --gap-probe 2>&1 | grep -E '^GPU busy|wall 1×' | tr -s ' ' | tr '\n' ' ')"
    done
done 2>&1 | tee $OUT/35_run9_walls.txt
for b in old new; do
    B=$D/lfm2-profile-stage; [ $b = new ] && B=$D/r/lfm2-profile-stage
    echo "== $b lfm2-1.2b cols 256 pos 1024 --wide"; timeout 100 $B --model lfm2-1.2b --layers 0:16 --cols 256 --pos 1024 --wide --reps 3 2>&1 | grep -E "GPU busy|^  attn|rror|:"  | head -8
done 2>&1 | tee -a $OUT/35_run9_walls.txt
echo "(${SECONDS}s)"
