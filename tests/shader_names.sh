#!/usr/bin/env sh
# tests/shader_names.sh ROOT NAMES - fails when shaders/variants.txt and the shader names the C code
# requests drift apart. NAMES is the table expanded by CMake (build/shader_names.txt: "build name
# kernel flags type" a line). Checks, over ROOT/src and ROOT/bench C files:
#  1. every name a gpu_pipeline call names as a literal ("embed", wide ? "a" : "b") is in the table;
#  2. every name of the table is requested: the name itself as a literal, or (a composed name, as
#     gemm.c builds "gemm" "_swiglu" "_fadd" "_bf16") its kernel as a literal or the head of a
#     format ("matmul%s_%s") and each of its flags as a literal "_flag".
set -u
root=$1 names=$2
[ -s "$names" ] || { echo "shader_names: $names is missing or empty" >&2; exit 1; }
srcs=$(find "$root/src" "$root/bench" -name '*.c' | sort)
lits=$(grep -ho '"[a-z0-9_%]*' $srcs | sort -u) # every literal's head, with its opening quote
fail=0 checked=0
for n in $(grep -h 'gpu_pipeline(' $(find "$root/src" -name '*.c') | grep -o '"[a-z0-9_]*"' | tr -d '"' | sort -u); do
    checked=$((checked + 1))
    awk -v n="$n" '$2 == n {f = 1} END {exit !f}' "$names" ||
        { echo "FAIL: src/ requests shader '$n', which shaders/variants.txt does not list" >&2; fail=1; }
done
while read -r build name kernel flags type; do
    checked=$((checked + 1))
    printf '%s\n' "$lits" | grep -qx "\"$name" && continue
    ok=1
    if [ "$name" = "$kernel" ]; then
        ok=0
    else
        printf '%s\n' "$lits" | grep -qE "^\"$kernel(%s|_%s|\$)" || ok=0
        if [ "$flags" != "-" ]; then
            for f in $(echo "$flags" | tr '+' ' '); do printf '%s\n' "$lits" | grep -qx "\"_$f" || ok=0; done
        fi
    fi
    [ $ok = 1 ] || { echo "FAIL: shaders/variants.txt lists $name ($build), which no C file of src/ or bench/ requests" >&2; fail=1; }
done <"$names"
[ $checked -gt 0 ] || { echo "shader_names: nothing checked" >&2; exit 1; }
echo "$checked names checked"
exit $fail
