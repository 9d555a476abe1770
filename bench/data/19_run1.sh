#!/usr/bin/env bash
# bench/19 run 1 (H200): targets with the prefill shape's one logit a slot, per-op JSONs, and the
# narrow/mid gemm sweep (tile, k step, splits, PF) through the tuning hooks
D=.dev-19; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st targets
OUT=$R timeout 240 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st allogits
{ for dt in bf16 q4_0; do for lg in --logits --all-logits; do
    echo "== $dt prefill 512 $lg"; $BIN --model lfm2-1.2b --full --dtype $dt --cols 512 --slots 1 --pos 0 --wide $lg --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1|head"; done; done
} > $R/allogits.txt 2>&1
cat $R/allogits.txt
st perop
for a in "bf16 16 wide" "bf16 64 wide" "bf16 512 wide" "bf16 1 batch" "q4_0 1 batch" "q4_0 16 wide"; do set -- $a
  x=""; [ $3 = wide ] && x=--wide; s=""; p=64; [ $2 = 512 ] && { s="--slots 1"; p=0; }
  timeout 60 $BIN --model lfm2-1.2b --full --dtype $1 --cols $2 $s --pos $p $x --logits --reps 5 --json $R/po_$1_$2_$3.json > $R/po_$1_$2_$3.txt 2>&1
done
st sweep
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum"; }
G=$D/gemm_bench
{ gb $G bf16 16 10
  gb LFM2_GEMM_PF=2 $G bf16 16 10
  gb LFM2_GEMM_TILE=64x16x128:4x1 LFM2_GEMM_TILE_SWIGLU=64x16x128:4x1 $G bf16 16 10
  gb LFM2_GEMM_TILE=32x16x64:2x1 LFM2_GEMM_TILE_SWIGLU=32x16x64:2x1 $G bf16 16 10
  gb LFM2_GEMM_TILE=32x16x128:2x1 LFM2_GEMM_TILE_SWIGLU=32x16x128:2x1 $G bf16 16 10
  for s in 2 4 16; do gb LFM2_GEMM_SPLITK=$s $G bf16 16 10; done
  gb $G bf16 32 10
  gb LFM2_GEMM_TILE=64x32x64:2x2 $G bf16 32 10
  gb LFM2_GEMM_TILE=64x32x64:4x1 $G bf16 32 10
  gb LFM2_GEMM_PF=2 $G bf16 32 10
  gb $G bf16 64 10
  gb LFM2_GEMM_TILE=128x64x32:4x1 $G bf16 64 10
  gb LFM2_GEMM_TILE=128x64x64:4x1 $G bf16 64 10
  gb LFM2_GEMM_TILE=64x64x64:4x1 LFM2_GEMM_TILE_SWIGLU=64x64x64:4x1 $G bf16 64 10
  gb LFM2_GEMM_PF=2 $G bf16 64 10
  for s in 4 16; do gb LFM2_GEMM_SPLITK=$s $G bf16 64 10; done
  gb $G bf16 256 10
  gb LFM2_GEMM_TILE=128x64x32:4x1 $G bf16 256 10
  gb LFM2_GEMM_TILE=128x64x64:4x1 $G bf16 256 10
  gb $G q4_0 16 10
  gb LFM2_GEMM_PF=2 $G q4_0 16 10
  gb LFM2_GEMM_TILE=64x16x128:4x1 LFM2_GEMM_TILE_SWIGLU=64x16x128:4x1 $G q4_0 16 10
} > $R/sweep.txt 2>&1
st done
cd $OUT && tar czf r1.tgz r
