#!/usr/bin/env bash
# bench/24 run 7 (H200): the LM head and the other products at 1-2 columns on each matrix-vector
# kernel: default, every product on xmv (LFM2_XMV_COLS), every Q product on qmv (LFM2_QMV_COLS).
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
bf() { # TAG DTYPE COLS ENV...
  local tag=$1 dt=$2 c=$3; shift 3
  env "$@" $BIN --model lfm2-1.2b --full --dtype $dt --cols $c --pos 64 --logits --gap-probe --reps 5 --json $R/bf_${tag}_${dt}_$c.json > $R/po_${tag}_${dt}_$c.txt 2>&1
  echo "== $tag $dt $c $*: $(grep 'wall 1× +head' $R/po_${tag}_${dt}_$c.txt)"
}
{ for dt in q4_0 q8_0 bf16; do for c in 1 2; do
    bf new $dt $c
    bf xmv $dt $c LFM2_XMV_COLS=$c
    [ $dt != bf16 ] && bf qmv $dt $c LFM2_QMV_COLS=$c
  done; done; } > $R/walls.txt 2>&1
cat $R/walls.txt
python3 $D/per_op.py $R > $R/per_op.txt; cat $R/per_op.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
