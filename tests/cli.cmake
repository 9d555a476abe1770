# CLI tests: the binary run as a user runs it, checked on exit code and message (tests/expect.sh).
# Labels: cli (no GPU: runs under ASan with leak checks), cli-gpu (loads lavapipe), golden.
set(BIN $<TARGET_FILE:lfm2-profile-stage>)
set(EXPECT ${CMAKE_SOURCE_DIR}/tests/expect.sh)
set(LT ${FIXTURES}/lfm2-tiny)
set(QT ${FIXTURES}/qwen35-tiny)
set(GT ${FIXTURES}/glm-ocr-tiny)

function(cli_test name label code text)
  add_test(NAME ${name} COMMAND ${EXPECT} ${code} "${text}" ${BIN} ${ARGN})
  set(env "LFM2_VALIDATION=require")
  if(NOT label STREQUAL "cli")
    list(APPEND env "ASAN_OPTIONS=detect_leaks=0")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT 900 ENVIRONMENT "${env}")
endfunction()

# usage and bad input: exit 2, one message naming the flag or file
cli_test(cli_help cli 0 "--layers a:b" --help)
cli_test(cli_version cli 0 "lfm2-profile-stage" --version)
cli_test(cli_list_models cli 0 "lfm2-1.2b" --list-models)
cli_test(cli_unknown_flag cli 2 "unknown argument --bogus" --bogus)
cli_test(cli_layers_reversed cli 2 "--layers 5:2" --model ${LT} --layers 5:2)
cli_test(cli_layers_past_end cli 2 "--layers 0:99" --model ${LT} --layers 0:99 --load-only)
cli_test(cli_layers_garbage cli 2 "--layers x" --model ${LT} --layers x)
cli_test(cli_cols_zero cli 2 "--cols 0" --model ${LT} --full --cols 0)
cli_test(cli_slots_not_divisor cli 2 "--slots 3" --model ${LT} --full --cols 16 --slots 3)
cli_test(cli_dtype_on_checkpoint cli 2 "--dtype" --model ${LT} --full --dtype q4_0)
cli_test(cli_dtype_unknown cli 2 "--dtype q3" --model lfm2-350m --full --dtype q3)
cli_test(cli_no_layers cli 2 "--layers a:b or --full" --model ${LT})
cli_test(cli_no_model cli 2 "--model" --full)
cli_test(cli_missing_path cli 2 "/nonexistent/model" --model /nonexistent/model --full)
cli_test(cli_folder_without_config cli 2 "config.json" --model ${CMAKE_SOURCE_DIR}/tests --full)
cli_test(cli_wide_profile cli-gpu 0 "wide=true" --model ${LT} --full --wide --cols 6 --slots 2 --pos 5 --reps 1)
# --tune (src/base/tune.h): unknown keys and bad values are usage errors naming the keys / range,
# before the GPU; the test-only keys (tune.h: test and bench programs) are unknown to the CLI
set(TUNE_KEYS "xmv_cols attn_kv_keys attn_split gemm_min_cols gemm_tile gemm_splitk gemm_wdeq_cols gemm_path pool_max")
cli_test(cli_tune_unknown_key cli 2 "--tune bogus: unknown key (expected one of: ${TUNE_KEYS})" --model ${LT} --full --tune xmv_cols=1 --tune bogus=1)
cli_test(cli_tune_test_only_key cli 2 "--tune matmul_ksl: unknown key (expected one of: ${TUNE_KEYS})" --model ${LT} --full --tune xmv_cols=1,matmul_ksl=16)
cli_test(cli_tune_bad_value cli 2 "--tune xmv_cols=9: expected an integer in 1..4" --model ${LT} --full --tune xmv_cols=9)
cli_test(cli_tune_bad_splitk cli 2 "--tune gemm_splitk=65: expected an integer in 1..64" --model ${LT} --full --tune gemm_splitk=65)
cli_test(cli_tune_bad_tile cli 2 "--tune gemm_tile=32x32x48: expected BMxBNxBK or BMxBNxBK:SMxSN" --model ${LT} --full --tune gemm_tile=32x32x48)
cli_test(cli_tune_bad_gemm_path cli 2 "--tune gemm_path=cm3: expected one of auto|khr|nv|fma|cm2" --model ${LT} --full --tune gemm_path=cm3)
# the gemm path (tune gemm_path, else the device's first of KHR, NV, the FMA twin) in the report
# header (the twin runs on every device) and in --list-devices
cli_test(cli_tune_gemm_path_header cli-gpu 0 "gemm path: fma (gemm_fma: the FMA twin, no cooperative matrices)" --model ${LT} --full --wide --cols 6 --reps 1 --pos 3 --tune gemm_path=fma)
cli_test(cli_list_devices_gemm_path cli-gpu 0 "gemm path " --list-devices)
# a tuned run names its overrides in the report header (and its JSON, test_report); gemm_min_cols
# moves the auto plan's line: wide at 2 columns
cli_test(cli_tune_min_cols cli-gpu 0 "plan auto -> wide (the plan a serving engine runs at 2 cols: wide from 2)" --model ${LT} --full --cols 2 --reps 1 --pos 3 --tune gemm_min_cols=2)
# gemm_splitk splits the wide plan's products along k: ffn_down (the longest k) runs 3 workgroups
# along z (by default 1)
add_test(NAME cli_tune_splitk COMMAND sh -c "$0 --model ${LT} --full --wide --cols 6 --reps 1 --pos 3 --tune gemm_splitk=3 --json - 2>&1 | grep -F '2, 3]'" ${BIN})
set_tests_properties(cli_tune_splitk PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
cli_test(cli_tune_header cli-gpu 0 "tune: xmv_cols=1,gemm_tile=32x32x32:1x1 (kernel-choice overrides" --model ${LT} --full --cols 2 --reps 1 --tune gemm_tile=32x32x32:1x1 --tune xmv_cols=1)
# --precision (issue 38): a bad value or a misspelt flag exits 2 naming it; the report's plan line says
# which ran, and how many dispatches rounded (none in the batch plan: its kernels are f32)
cli_test(cli_precision_unknown cli 2 "--precision fast: expected exact or serving" --model ${LT} --full --precision fast)
cli_test(cli_precision_near cli 2 "--precision servng: expected exact or serving (did you mean serving?)" --model ${LT} --full --precision servng)
cli_test(cli_precision_missing cli 2 "--precision (missing): expected exact or serving" --model ${LT} --full --precision)
cli_test(cli_precision_typo cli 2 "unknown argument --precison: did you mean --precision?" --model ${LT} --full --precison serving)
cli_test(cli_precision_wide cli-gpu 0 "plan wide; precision serving (f16 activations, one product: " --model ${LT} --full --wide --cols 6 --pos 3 --reps 1 --precision serving)
cli_test(cli_precision_exact cli-gpu 0 "plan wide; precision exact (f32-accurate)" --model ${LT} --full --wide --cols 6 --pos 3 --reps 1)
cli_test(cli_precision_stages cli-gpu 0 "== pipeline: 2 stages (even split 0:3,3:6), 6 cols, plan wide, precision serving ==" --model ${LT} --stages 2 --wide --cols 6 --pos 3 --reps 1 --precision serving)
cli_test(cli_precision_batch cli-gpu 0 "precision serving (no kernel of this step rounds: all f32)" --model ${LT} --full --cols 2 --pos 3 --reps 1 --precision serving)
cli_test(cli_spec_cols_not_multiple cli 2 "multiple of 4" --model ${LT} --full --spec --cols 6)
cli_test(cli_wide_and_spec cli 2 "--wide and --spec" --model ${LT} --full --wide --spec)
cli_test(cli_current_without_compare cli 2 "--compare" --current x.json)
cli_test(cli_cols_list_garbage cli 2 "--cols 1,,4" --model ${LT} --full --cols 1,,4)
cli_test(cli_cols_list_json cli 2 "--json takes one width" --model ${LT} --full --cols 1,4 --json x.json)
# --golden runs the golden's own shapes: the step-shape flags are ignored (docs/design.md), with a note,
# even where they would be refused without it (--slots 3 divides no width here, a list of widths)
cli_test(cli_golden_ignores_shape golden 0 "--cols, --slots, --pos and --logits are ignored" --model ${LT} --full --golden ${LT}/golden.safetensors --cols 1,16 --slots 3 --pos 5 --logits)
cli_test(cli_plans_unknown cli 2 "--plans batch,fast" --model ${LT} --full --plans batch,fast)
cli_test(cli_plans_and_wide cli 2 "--plans and --wide" --model ${LT} --full --plans batch --wide)
cli_test(cli_timing_unknown cli 2 "--timing some" --model ${LT} --full --timing some)
cli_test(cli_stride_without_sampled cli 2 "--sample-stride 4 needs --timing sampled" --model ${LT} --full --sample-stride 4)
cli_test(cli_slots_not_divisor_list cli 2 "--slots 2" --model ${LT} --full --cols 4,3 --slots 2)
# a saved comparison refuses the flags of a live run rather than ignore them
cli_test(cli_compare_files_live_flag cli 2 "--precision shapes a live run and would be ignored" --compare a.json --current b.json --precision serving)
cli_test(cli_compare_files_tune cli 2 "--tune shapes a live run" --compare a.json --current b.json --tune gemm_splitk=2)
cli_test(cli_compare_files_model cli 2 "--model shapes a live run" --compare a.json --current b.json --model lfm2-350m)
cli_test(cli_compare_missing_file cli 2 "nope.json" --compare nope.json --current nope.json)

# the fixtures match the checksums their README lists (tests/fixtures/README.md)
add_test(NAME fixtures_checksums COMMAND ${CMAKE_SOURCE_DIR}/tests/fixtures_check.sh ${FIXTURES})
set_tests_properties(fixtures_checksums PROPERTIES LABELS loader)

# loading on lavapipe
cli_test(cli_load_tiny cli-gpu 0 "uploaded" --model ${LT} --full --load-only)
cli_test(cli_load_qwen_1_3 cli-gpu 0 "uploaded 28 tensors" --model ${FIXTURES}/qwen35-tiny --layers 1:3 --load-only)
cli_test(cli_load_glm cli-gpu 0 "file tensors, not part of the decoder: vision tower (25)" --model ${FIXTURES}/glm-ocr-tiny --full --load-only)
cli_test(cli_load_builtin cli-gpu 0 "), timestamps: " --model lfm2-350m --layers 0:2 --load-only)
cli_test(cli_load_builtin_q4 cli-gpu 0 "uploaded" --model lfm2-350m --layers 14:16 --dtype q4_0 --load-only)
cli_test(cli_qwen_profile cli-gpu 0 "dn.recurrent" --model ${QT} --full --cols 4 --pos 3 --reps 2 --logits --gap-probe)
cli_test(cli_qwen_profile_prefill_split cli-gpu 0 "attn.gated.prefill" --model ${QT} --layers 2:4 --cols 6 --slots 2 --pos 5 --reps 1)
cli_test(cli_qwen_spec_profile cli-gpu 0 "dn.recurrent.snap" --model ${QT} --full --spec --cols 4 --pos 2 --reps 1)
cli_test(cli_spec_profile cli-gpu 0 "shortconv.snap" --model ${LT} --full --spec --cols 8 --pos 5 --reps 1)
cli_test(cli_spec_profile_slots cli-gpu 0 "plan spec: 2 slots × drafts of 3 tokens" --model ${LT} --layers 1:4 --spec --cols 6 --slots 2 --pos 3 --reps 1)
cli_test(cli_list_devices cli-gpu 0 "llvmpipe" --list-devices)
# the cooperative-matrix lines: NV v1 shapes, KHR, and whether gemm_cm2 can run (VK_NV_cooperative_matrix2)
cli_test(cli_list_devices_coopmat2 cli-gpu 0 "VK_NV_cooperative_matrix2" --list-devices)
cli_test(cli_device_out_of_range cli-gpu 2 "--device 7" --model ${LT} --full --load-only --device 7)

# golden checks: golden_tests(PREFIX DIR SPLIT N CHECKS FILE:GOLD ...) runs each model file of DIR
# against its golden, whole and split at layer SPLIT of N (golden_<PREFIX><gold>_full, _0_<SPLIT>,
# _<SPLIT>_<N>), each expecting CHECKS of CHECKS passed; GOLDEN_EXTRA (e.g. --spec) is added to each.
# the 9-check goldens of LFM2 and Qwen3.5 in every format (FORMATS), whole models, under more
# environment (envs: "A=1;B=2"): tests prefix<family>_<golden>
function(golden_every_format prefix envs)
  foreach(m ${FORMATS})
    string(REPLACE ":" ";" mg ${m})
    list(GET mg 0 model)
    list(GET mg 1 gold)
    foreach(d "${LT}" "${QT}")
      get_filename_component(fam ${d} NAME)
      set(mp ${d}/${model})
      if(model STREQUAL "model.safetensors")
        set(mp ${d})
      endif()
      cli_test(${prefix}${fam}_${gold} golden 0 "golden: 9/9 checks passed" --model ${mp} --full ${GOLDEN_EXTRA} --golden ${d}/${gold}.safetensors)
      set_tests_properties(${prefix}${fam}_${gold} PROPERTIES ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0;${envs}")
    endforeach()
  endforeach()
endfunction()
function(golden_tests prefix dir k n checks)
  foreach(v ${ARGN})
    string(REPLACE ":" ";" parts ${v})
    list(GET parts 0 file)
    list(GET parts 1 gold)
    set(model ${dir}/${file})
    if(file STREQUAL "model.safetensors")
      set(model ${dir})
    endif()
    set(ok "golden: ${checks}/${checks} checks passed")
    set(g ${dir}/${gold}.safetensors)
    cli_test(golden_${prefix}${gold}_full golden 0 "${ok}" --model ${model} --full --golden ${g} ${GOLDEN_EXTRA})
    cli_test(golden_${prefix}${gold}_0_${k} golden 0 "${ok}" --model ${model} --layers 0:${k} --golden ${g} ${GOLDEN_EXTRA})
    cli_test(golden_${prefix}${gold}_${k}_${n} golden 0 "${ok}" --model ${model} --layers ${k}:${n} --golden ${g} ${GOLDEN_EXTRA})
  endforeach()
endfunction()
set(FORMATS "model.safetensors:golden" "model-f16.gguf:golden-f16" "model-q8_0.gguf:golden-q8_0" "model-q4_0.gguf:golden-q4_0")
# LFM2 (the batch step verified against transformers); long goldens: 2 sequences of 144 tokens
# (several KV blocks; prefill steps of 288 columns)
golden_tests("" ${LT} 3 6 9 ${FORMATS})
golden_tests("" ${LT} 3 6 6 "model.safetensors:golden-long" "model-q4_0.gguf:golden-q4_0-long")
# the wide plan (issue 8): the same goldens; long ones ~40 s of CPU each on lavapipe: label
# `long` (.ci/run runs them too) but for the BF16 whole model, which keeps the 288-column wide step
# in the default run
set(GOLDEN_EXTRA --wide)
golden_tests(wide_ ${LT} 3 6 9 ${FORMATS})
unset(GOLDEN_EXTRA)
cli_test(golden_wide_golden-long_full golden 0 "golden: 6/6 checks passed" --model ${LT} --full --wide --golden ${LT}/golden-long.safetensors)
foreach(t "0:3" "3:6")
  string(REPLACE ":" "_" n ${t})
  cli_test(golden_wide_golden-long_${n} long 0 "golden: 6/6 checks passed" --model ${LT} --layers ${t} --wide --golden ${LT}/golden-long.safetensors)
endforeach()
foreach(t "full" "0:3" "3:6")
  string(REPLACE ":" "_" n ${t})
  set(l --layers ${t})
  if(t STREQUAL "full")
    set(l --full)
  endif()
  cli_test(golden_wide_golden-q4_0-long_${n} long 0 "golden: 6/6 checks passed" --model ${LT}/model-q4_0.gguf ${l} --wide --golden ${LT}/golden-q4_0-long.safetensors)
endforeach()
# xmv.comp (x in registers) on every step of up to 4 columns (--tune xmv_cols=4; by default only
# Q8_0 up to 2 columns and Q4_0 up to 8): the 3-column decode and mixed steps of LFM2 and Qwen3.5
# through it, every format, whole models
set(GOLDEN_EXTRA --tune xmv_cols=4)
golden_every_format(golden_xmv_ "")
unset(GOLDEN_EXTRA)
# the spec plan (issue 10): a verify of 8 draft tokens, accept 4, decode on from snapshot 4
set(GOLDEN_EXTRA --spec)
golden_tests(spec_ ${LT} 3 6 6 ${FORMATS})
unset(GOLDEN_EXTRA)
cli_test(golden_spec_long_full golden 0 "golden: 4/4 checks passed" --model ${LT} --full --spec --golden ${LT}/golden-long.safetensors)
# a broken snapshot (the spec step writes none) passes the verify and fails every rollback
add_test(NAME golden_spec_broken_snapshot_fails COMMAND ${EXPECT} 4 "golden: 3/6 checks passed" ${BIN} --model ${LT} --full --spec --golden ${LT}/golden.safetensors)
set_tests_properties(golden_spec_broken_snapshot_fails PROPERTIES LABELS golden TIMEOUT 900
  ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0;LFM2_TEST_SKIP_SNAPSHOT=1")
# Qwen3.5 (issue 9): BF16 safetensors and the GGUFs (tiled value heads, ssm_a, +1 norms); the long
# goldens (prefill runs of 144 tokens) whole and split, so the DeltaNet state crosses the shards
golden_tests(qwen_ ${QT} 2 4 9 ${FORMATS})
# Qwen3.5 under --spec (issue 10, bench/14): DeltaNet snapshots (conv window and delta-rule state)
# after every draft column; a broken snapshot must fail every rollback check
set(GOLDEN_EXTRA --spec)
golden_tests(spec_qwen_ ${QT} 2 4 6 ${FORMATS})
unset(GOLDEN_EXTRA)
cli_test(golden_spec_qwen_long_full golden 0 "golden: 4/4 checks passed" --model ${QT} --full --spec --golden ${QT}/golden-long.safetensors)
add_test(NAME golden_spec_qwen_broken_snapshot_fails COMMAND ${EXPECT} 4 "golden: 3/6 checks passed" ${BIN} --model ${QT} --full --spec --golden ${QT}/golden.safetensors)
set_tests_properties(golden_spec_qwen_broken_snapshot_fails PROPERTIES LABELS golden TIMEOUT 900
  ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0;LFM2_TEST_SKIP_SNAPSHOT=1")
golden_tests(qwen_ ${QT} 2 4 6 "model.safetensors:golden-long" "model-q4_0.gguf:golden-q4_0-long")
# the wide plan over Qwen3.5 (the tiled gated attention, gemm): the same goldens.
# Label `long` but for the BF16 whole model, as for LFM2
set(GOLDEN_EXTRA --wide)
golden_tests(wide_qwen_ ${QT} 2 4 9 ${FORMATS})
unset(GOLDEN_EXTRA)
cli_test(golden_wide_qwen_golden-long_full golden 0 "golden: 6/6 checks passed" --model ${QT} --full --wide --golden ${QT}/golden-long.safetensors)
foreach(t "0:2" "2:4")
  string(REPLACE ":" "_" n ${t})
  cli_test(golden_wide_qwen_golden-long_${n} long 0 "golden: 6/6 checks passed" --model ${QT} --layers ${t} --wide --golden ${QT}/golden-long.safetensors)
endforeach()
foreach(t "full" "0:2" "2:4")
  string(REPLACE ":" "_" n ${t})
  set(l --layers ${t})
  if(t STREQUAL "full")
    set(l --full)
  endif()
  cli_test(golden_wide_qwen_golden-q4_0-long_${n} long 0 "golden: 6/6 checks passed" --model ${QT}/model-q4_0.gguf ${l} --wide --golden ${QT}/golden-q4_0-long.safetensors)
endforeach()
# serving precision (issue 38): the wide plan's products on x' and w rounded to f16, one product
# (gemm.comp SERVING; the FMA twin rounds as the tensor cores do), every fixture against its goldens
# at the serving bar (golden.h GOLDEN_TOL_SERVING: bench/41 measured 2.0e-4 to 1.2e-3 on these);
# the long ones label `long` but for the BF16 whole models, as above
set(GOLDEN_EXTRA --wide --precision serving)
golden_tests(serving_ ${LT} 3 6 9 ${FORMATS})
golden_tests(serving_qwen_ ${QT} 2 4 9 ${FORMATS})
golden_tests(serving_glm_ ${GT} 1 3 9 "model.safetensors:golden")
unset(GOLDEN_EXTRA)
foreach(d "${LT}" "${QT}" "${GT}")
  get_filename_component(fam ${d} NAME)
  cli_test(golden_serving_${fam}_long golden 0 "golden: 6/6 checks passed" --model ${d} --full --wide --precision serving --golden ${d}/golden-long.safetensors)
endforeach()
foreach(d "${LT}" "${QT}")
  get_filename_component(fam ${d} NAME)
  cli_test(golden_serving_${fam}_q4_0_long long 0 "golden: 6/6 checks passed" --model ${d}/model-q4_0.gguf --full --wide --precision serving --golden ${d}/golden-q4_0-long.safetensors)
endforeach()
# the switch takes effect: the same golden's worst prefill check is under 1e-5 in exact precision
# and over 1e-4 in serving (measured 1.1e-6 and 1.2e-3, bench/41); the header names the bar
add_test(NAME golden_serving_differs COMMAND sh -c "worst() { $0 --model ${LT} --full --wide --precision $1 --golden ${LT}/golden.safetensors | tee /dev/stderr | awk '/^golden prefill/ {if ($7 + 0 > m) m = $7 + 0} END {print m + 0}'; } && e=$(worst exact) && s=$(worst serving) && echo \"worst prefill max_rel: exact $e, serving $s\" && awk -v e=$e -v s=$s 'BEGIN {exit !(e + 0 < 1e-5 && s + 0 > 1e-4)}'" ${BIN})
set_tests_properties(golden_serving_differs PROPERTIES LABELS golden TIMEOUT 900 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# the batch plan's kernels are f32 in either precision: a serving run says so and keeps exact's bar
cli_test(golden_serving_batch golden 0 "precision serving: no kernel of this plan rounds (tolerance 1e-03)" --model ${LT} --full --precision serving --golden ${LT}/golden.safetensors)
# the check can fail: an unwritten output (poisoned) fails
add_test(NAME golden_unwritten_output_fails COMMAND ${EXPECT} 4 "FAIL" ${BIN} --model ${LT} --full --golden ${LT}/golden.safetensors)
set_tests_properties(golden_unwritten_output_fails PROPERTIES LABELS golden TIMEOUT 900
  ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0;LFM2_TEST_DROP_LAST_DISPATCH=1")
cli_test(golden_wrong_model golden 2 "the model has 6 layers" --model ${LT} --full --golden ${FIXTURES}/qwen35-tiny/golden.safetensors)

# ---- hostile input and faults (issue 11)
# conflicting flags and outputs: exit 2 before anything loads
cli_test(cli_load_only_golden cli 2 "--load-only and --golden" --model ${LT} --full --load-only --golden ${LT}/golden.safetensors)
cli_test(cli_load_only_json cli 2 "--load-only and --json" --model ${LT} --full --load-only --json out.json)
cli_test(cli_golden_json cli 2 "--golden and --json" --model ${LT} --full --golden ${LT}/golden.safetensors --json out.json)
cli_test(cli_json_trace_same cli 2 "name the same file" --model ${LT} --full --json same.json --trace same.json)
# long paths keep the OS reason at the end of the message
string(REPEAT "d" 1500 LONG_DIR)
cli_test(cli_long_path cli 2 "No such file or directory" --model /nonexistent/${LONG_DIR}/model --full)
# no Vulkan driver: a message saying what to install
function(cli_test_env name label code text envs)
  add_test(NAME ${name} COMMAND ${EXPECT} ${code} "${text}" ${BIN} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT 300
    ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0;${envs}")
endfunction()
set(NO_DRIVER "VK_DRIVER_FILES=/nonexistent/icd.json;VK_ICD_FILENAMES=/nonexistent/icd.json")
# a gemm path the device lacks is a usage error naming the device and the extension (the test hook
# takes both cooperative paths away, so on every device)
cli_test_env(cli_gemm_path_absent cli-gpu 2 "' has no usable VK_KHR_cooperative_matrix" "LFM2_TEST_NO_COOPMAT=1" --model ${LT} --full --wide --cols 6 --reps 1 --tune gemm_path=khr)
# gemm_cm2 (VK_NV_cooperative_matrix2) is never automatic; forced on a device without it (lavapipe,
# and any device under Debian 12's validation layer, which predates it) exit 2 names both
cli_test(cli_gemm_path_cm2_absent cli-gpu 2 "' has no usable VK_NV_cooperative_matrix2 (workgroup-scope matrices" --model ${LT} --full --wide --cols 6 --reps 1 --tune gemm_path=cm2)
cli_test_env(cli_no_vulkan_driver cli 1 "install mesa-vulkan-drivers" "${NO_DRIVER}" --model lfm2-350m --layers 0:1 --load-only)
# every input and output is checked before the GPU is opened (no driver: a GPU open would say so)
cli_test_env(cli_golden_before_gpu cli 2 "the model has 6 layers" "${NO_DRIVER}" --model ${LT} --full --golden ${FIXTURES}/qwen35-tiny/golden.safetensors)
cli_test_env(cli_json_dir_before_gpu cli 2 "does not exist" "${NO_DRIVER}" --model ${LT} --full --json /nonexistent/dir/out.json)
cli_test_env(cli_trace_dir_before_gpu cli 2 "is a folder" "${NO_DRIVER}" --model ${LT} --full --trace /tmp)
# LFM2_VALIDATION=require (every GPU test's setting) fails when the layer is not installed
cli_test_env(cli_validation_required cli 1 "LFM2_VALIDATION=require: the Vulkan validation layer" "VK_LAYER_PATH=/nonexistent" --list-devices)
# the --compare gate at every rep count (issue 35, tests/gate.sh): the test hook LFM2_TEST_SLOW
# slows every kernel 20x: exit 3 at 3 and 10 reps, saved and live; the same run twice passes; one rep
# a side cannot tell (exit 5); a live compare against another shape exits 2 before the GPU opens
set(GATE ${CMAKE_SOURCE_DIR}/tests/gate.sh)
set(GATE_ARGS --model ${LT} --layers 0:2 --pos 4)
add_test(NAME cli_gate_slow_3 COMMAND ${GATE} slow ${BIN} 3 ${GATE_ARGS} --cols 2)
add_test(NAME cli_gate_slow_10 COMMAND ${GATE} slow ${BIN} 10 ${GATE_ARGS} --cols 2)
add_test(NAME cli_gate_same COMMAND ${GATE} same ${BIN} ${GATE_ARGS} --cols 2)
add_test(NAME cli_gate_undecided COMMAND ${GATE} undecided ${BIN} ${GATE_ARGS} --cols 2)
add_test(NAME cli_gate_precheck COMMAND ${GATE} precheck ${BIN} ${GATE_ARGS})
add_test(NAME cli_gate_precision COMMAND ${GATE} precision ${BIN} ${GATE_ARGS})
set_tests_properties(cli_gate_slow_3 cli_gate_slow_10 cli_gate_same cli_gate_undecided cli_gate_precheck cli_gate_precision PROPERTIES
  LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# FIFOs and trailing garbage as --compare files: exit 2 at once, never a hang
add_test(NAME cli_compare_fifo COMMAND sh -c "d=$(mktemp -d) && mkfifo $d/f && timeout 60 ${EXPECT} 2 'not a regular file' $0 --compare $d/f --current $d/f; rc=$?; rm -rf $d; exit $rc" ${BIN})
add_test(NAME cli_compare_trailing COMMAND sh -c "d=$(mktemp -d) && printf '{}{}' > $d/f && ${EXPECT} 2 'more after its JSON value' $0 --compare $d/f --current $d/f; rc=$?; rm -rf $d; exit $rc" ${BIN})
add_test(NAME cli_model_fifo COMMAND sh -c "d=$(mktemp -d) && mkfifo $d/m.gguf && timeout 60 ${EXPECT} 2 'not a regular file' $0 --model $d/m.gguf --full --load-only; rc=$?; rm -rf $d; exit $rc" ${BIN})
set_tests_properties(cli_compare_fifo cli_compare_trailing cli_model_fifo PROPERTIES LABELS cli TIMEOUT 120 ENVIRONMENT "LFM2_VALIDATION=require")
# --json - writes the JSON to stdout (the text report to stderr) and no file named "-"
add_test(NAME cli_json_stdout COMMAND sh -c "d=$(mktemp -d) && cd $d && $0 --model ${LT} --layers 0:2 --cols 2 --pos 4 --reps 1 --json - > out 2> err && ! test -e ./- && grep -q '\"busy_us\"' out && grep -Eq '\"roof_path\":[[:space:]]*\"f32 FMA\"' out && grep -q '\"flops_exec\"' out && grep -q 'GPU busy' err; rc=$?; cat out err | head -40; rm -rf $d; exit $rc" ${BIN})
set_tests_properties(cli_json_stdout PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# out of device memory: exit 1 naming the buffer, the size asked, what is free and the heap
cli_test(cli_out_of_device_memory cli-gpu 1 "buffer: out of device memory: asked" --model lfm2-350m --layers 2:3 --cols 4096 --pos 1000000 --reps 1)
# GLM-OCR (issue 12): the text decoder against transformers, whole and split 0:1 + 1:3, 16 and 144
# tokens; the built-in profiles (quantized: the fused gate_up stack split at upload)
foreach(gold golden golden-long)
  if(gold STREQUAL "golden")
    set(n 9)
  else()
    set(n 6)
  endif()
  cli_test(golden_glm_${gold}_full golden 0 "golden: ${n}/${n} checks passed" --model ${GT} --full --golden ${GT}/${gold}.safetensors)
  cli_test(golden_glm_${gold}_0_1 golden 0 "golden: ${n}/${n} checks passed" --model ${GT} --layers 0:1 --golden ${GT}/${gold}.safetensors)
  cli_test(golden_glm_${gold}_1_3 golden 0 "golden: ${n}/${n} checks passed" --model ${GT} --layers 1:3 --golden ${GT}/${gold}.safetensors)
endforeach()
cli_test(cli_glm_profile_tiny cli-gpu 0 "-- LM head" --model ${GT} --full --cols 4 --logits --gap-probe --pos 4 --reps 1)
# the wide plan serves every family (Qwen3.5's DeltaNet and gated attention keep their kernels)
cli_test(golden_wide_glm_full golden 0 "golden: 9/9 checks passed" --model ${GT} --full --wide --golden ${GT}/golden.safetensors)
cli_test(golden_wide_glm_long_full long 0 "golden: 6/6 checks passed" --model ${GT} --full --wide --golden ${GT}/golden-long.safetensors)
cli_test(cli_glm_builtin_q4 cli-gpu 0 "rmsnorm_add" --model glm-ocr --layers 0:1 --cols 2 --pos 2 --reps 1 --dtype q4_0)
cli_test(golden_glm_spec golden 0 "golden: 6/6 checks passed" --model ${GT} --full --spec --golden ${GT}/golden.safetensors)

# the wide plan's Q4_0 products through f16 copies of their weights at every width (gemm_wdeq.comp;
# by default from 256 columns on cooperative matrices)
# the widening leaves the step's weight-bytes floor alone (each weight once: the products carry the bytes)
cli_test(cli_wide_q4_0_floor cli-gpu 0 "floor: 0.542 MB of weights" --model ${LT}/model-q4_0.gguf --full --wide --cols 6 --reps 1)
cli_test_env(cli_wide_wdeq_floor cli-gpu 0 "floor: 0.542 MB of weights" "" --tune gemm_wdeq_cols=1 --model ${LT}/model-q4_0.gguf --full --wide --cols 6 --reps 1)
# --attribution copies the scratch the widening writes, so its row is measured (engine.c builds a plan
# again where its scratch grew while building, so no dispatch writes an outgrown buffer)
cli_test_env(cli_wide_wdeq_attribution cli-gpu 0 "gemm_wdeq.q4_0                           n=24   diff" "" --tune gemm_wdeq_cols=1 --model ${LT}/model-q4_0.gguf --full --wide --cols 6 --reps 2 --attribution)
# a decode step at a long context (past K_ATTN_KV_KEYS) takes its attention by kv head and splits
# its keys across workgroups (bench/35: a kv head and 2 columns fill too little), then merges them;
# --attribution copies the splits' scratch, so the attention's row is measured too
cli_test(cli_attn_split_attribution cli-gpu 0 "attn.merge                               n=2    diff" --model ${LT} --full --cols 2 --pos 600 --reps 2 --attribution)
# every family's goldens through the attention by kv head (attn_kv.comp: by default only at long
# contexts or 64 decode columns, which no golden reaches), its keys split in three and merged (attn_merge.comp)
cli_test_env(golden_attn_kv_long golden 0 "golden: 6/6 checks passed" "" --tune attn_kv_keys=0,attn_split=3 --model ${LT} --full --golden ${LT}/golden-long.safetensors)
cli_test_env(golden_attn_kv_qwen_long golden 0 "golden: 6/6 checks passed" "" --tune attn_kv_keys=0,attn_split=3 --model ${QT} --full --golden ${QT}/golden-long.safetensors)
# the state and KV pools packed into several buffers (engine.h engine_pool; --tune pool_max lowers the
# device's largest allocation): LFM2's KV two layers' pools a buffer, Qwen3.5's states likewise
# (a region at the wrong offset fails them); below one layer's region, the error
cli_test_env(golden_pools_split golden 0 "golden: 6/6 checks passed" "" --tune pool_max=300000 --model ${LT} --full --golden ${LT}/golden-long.safetensors)
cli_test_env(golden_pools_split_qwen golden 0 "golden: 6/6 checks passed" "" --tune pool_max=1200000 --model ${QT} --full --golden ${QT}/golden-long.safetensors)
cli_test_env(cli_pool_too_small cli 1 "engine KV pool buffer: out of device memory: asked 0.1 MiB (106496 bytes) for one layer" "" --tune pool_max=100000 --model ${LT} --full --cols 2 --pos 200)
cli_test_env(golden_attn_kv_glm_long golden 0 "golden: 6/6 checks passed" "" --tune attn_kv_keys=0,attn_split=3 --model ${GT} --full --golden ${GT}/golden-long.safetensors)
cli_test_env(golden_wide_wdeq_q4_0_full golden 0 "golden: 9/9 checks passed" "" --tune gemm_wdeq_cols=1 --model ${LT}/model-q4_0.gguf --full --wide --golden ${LT}/golden-q4_0.safetensors)
cli_test_env(golden_wide_wdeq_qwen_q4_0_full golden 0 "golden: 9/9 checks passed" "" --tune gemm_wdeq_cols=1 --model ${QT}/model-q4_0.gguf --full --wide --golden ${QT}/golden-q4_0.safetensors)

# --stages (issue 40): bad values and flags it cannot honour exit 2 naming them (no GPU: the model's
# config alone says the layer count); test_stages runs the splits end to end
cli_test(cli_stages_gap cli 2 "layers 3:4 are in no stage" --model ${LT} --stages 0:3,4:6)
cli_test(cli_stages_overlap cli 2 "layers 3:4 are in two stages" --model ${LT} --stages 0:4,3:6)
cli_test(cli_stages_short cli 2 "the last stage ends at layer 5; the model has 6 layers" --model ${LT} --stages 0:3,3:5)
cli_test(cli_stages_start cli 2 "first stage starts at layer 1" --model ${LT} --stages 1:6)
cli_test(cli_stages_too_many cli 2 "--stages 7: more stages than the model's 6 layers" --model ${LT} --stages 7)
cli_test(cli_stages_zero cli 2 "--stages 0: expected a stage count" --model ${LT} --stages 0)
cli_test(cli_stages_garbage cli 2 "--stages 0:3,x" --model ${LT} --stages 0:3,x)
cli_test(cli_stages_layers cli 2 "--stages and --layers" --model ${LT} --stages 2 --layers 0:3)
# the layer costs: from the stages' own runs by default; one-layer shards without timestamps
cli_test(cli_stages_layer_shares cli-gpu 0 "layer costs (each layer's share of its stage's kernel time" --model ${LT} --stages 2 --cols 2 --reps 2)
cli_test(cli_stages_layer_shards cli-gpu 0 "layer costs (marginal pass of each one-layer shard" --model ${LT} --stages 2 --cols 2 --reps 2 --timing none)
# the fixed parts (step − marginal by role) come from the stages' gap probes, one-layer shards or not
cli_test(cli_stages_fixed_shards cli-gpu 0 "fixed parts (step − marginal of the even split's stages, at least 0): first " --model ${LT} --stages 2 --cols 2 --reps 2 --timing none)
# K = 3: one middle stage, its fixed part named without a "median of 1"
cli_test(cli_stages_fixed_middle cli-gpu 0 "at least 0): first " --model ${LT} --stages 0:2,2:4,4:6 --cols 2 --reps 2)
set_tests_properties(cli_stages_fixed_middle PROPERTIES FAIL_REGULAR_EXPRESSION "median of 1\\)")
cli_test(cli_stages_units cli-gpu 0 "marginal ms" --model ${LT} --stages 2 --cols 2 --reps 2 --units ms)
cli_test(cli_stages_cols_list cli 2 "--stages takes one width and one plan" --model ${LT} --stages 2 --cols 1,4)
cli_test(cli_stages_current cli 2 "--stages and --current" --model ${LT} --stages 2 --compare a.json --current b.json)
# every output flag with --stages either works (--json, --markdown, --csv, --html) or is refused
# before the GPU opens: --trace (one step's dispatches; a pipeline has many), an unwritable
# --csv/--html; a comparison of two pipeline files takes --markdown only
cli_test(cli_stages_trace cli 2 "--stages and --trace" --model ${LT} --stages 2 --trace t.json)
cli_test(cli_stages_csv_unwritable cli 2 "--csv /nonexistent/x.csv: folder /nonexistent does not exist" --model ${LT} --stages 2 --csv /nonexistent/x.csv)
cli_test(cli_stages_html_unwritable cli 2 "--html /nonexistent/x.html: folder /nonexistent does not exist" --model ${LT} --stages 2 --html /nonexistent/x.html)
foreach(flag csv html trace)
  add_test(NAME cli_stages_compare_${flag} COMMAND sh -c "d=$(mktemp -d) || exit 1; printf '{\"pipeline\":{}}' > $d/p.json; \
    ${EXPECT} 2 '--${flag} with a comparison of two pipeline files is not supported yet' $0 --compare $d/p.json --current $d/p.json --${flag} $d/x.out; \
    rc=$?; rm -rf $d; exit $rc" ${BIN})
  set_tests_properties(cli_stages_compare_${flag} PROPERTIES LABELS cli TIMEOUT 60)
endforeach()
# --stages --csv: the pipeline's sections (stage rows of both splits, a summary row per split, a row
# per layer), one blank line between them; --html: the page, whole (tests/html_check.sh renders it)
add_test(NAME cli_stages_csv_html COMMAND sh -c "d=$(mktemp -d) || exit 1; trap 'rm -rf $d' EXIT; \
  $0 --model ${LT} --stages 2 --cols 2 --reps 2 --csv $d/p.csv --html $d/p.html > $d/out 2>&1 || { cat $d/out; exit 1; }; cat $d/p.csv; \
  grep -q '^table,split,stage,a,b,step_us,p10_us,p90_us,of_slowest,marginal_us,marginal_err_us,predicted_us,bottleneck,fixed_us$' $d/p.csv && \
  grep -q '^pipeline_stage,even,0,0,3,[0-9]' $d/p.csv && grep -q '^pipeline_stage,even,1,3,6,[0-9].*,[01],[0-9.e+-]*$' $d/p.csv && \
  grep -q '^table,.*,same_as_given,fixed_first_us,fixed_middle_us,fixed_last_us$' $d/p.csv && \
  grep -q '^pipeline,even,2,.*,0,[0-9.e+-]*,,[0-9.e+-]*$' $d/p.csv && \
  grep -q '^pipeline_stage,balanced,1,' $d/p.csv && grep -q '^pipeline,even,2,\"0:3,3:6\",2,[01],[0-9]' $d/p.csv && \
  grep -q '^pipeline,balanced,2,' $d/p.csv && test $(grep -c '^layer_cost,[0-9]*,.*,stage_shares,[01],[01]$' $d/p.csv) = 6 && \
  test $(grep -c '^table,' $d/p.csv) = 3 && test $(grep -c '^$' $d/p.csv) = 2 && \
  grep -q 'aria-label=\"stage step times\"' $d/p.html && grep -q 'aria-label=\"per-layer costs\"' $d/p.html && \
  tail -1 $d/p.html | grep -q '</html>'" ${BIN})
set_tests_properties(cli_stages_csv_html PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# every stage under the run's --tune, each on its engine's kernel scratch (f16 weight copies, attention's
# key splits), released with the stage's memory before the next (gpu_mark / gpu_release): both stages
# run both kinds, under the validation layer
add_test(NAME cli_stages_tune_scratch COMMAND sh -c "out=$($0 \"$@\" 2>&1); rc=$?; printf '%s\\n' \"$out\"; [ $rc = 0 ] && [ $(printf '%s\\n' \"$out\" | grep -c '^  gemm_wdeq.q4_0 ') -ge 2 ] && [ $(printf '%s\\n' \"$out\" | grep -c '^  attn.merge ') -ge 2 ]" ${BIN} --model ${LT}/model-q4_0.gguf --stages 2 --wide --cols 6 --reps 1 --pos 40 --tune gemm_wdeq_cols=1,attn_kv_keys=0,attn_split=3)
set_tests_properties(cli_stages_tune_scratch PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# ---- outputs under faults, the last inputs (issue 39; docs/outputs.md; the write faults themselves:
# test_report_outputs). Two spellings of one output file: exit 2 before anything loads.
add_test(NAME cli_same_output_spellings COMMAND sh -c "d=$(mktemp -d) && mkdir $d/sub && ln -s out.json $d/link.json \
&& ${EXPECT} 2 'name the same file' $0 --model ${LT} --full --json $d/out.json --trace $d/./out.json \
&& ${EXPECT} 2 'name the same file' $0 --model ${LT} --full --json $d/out.json --trace $d/sub/../out.json \
&& ${EXPECT} 2 'name the same file' $0 --model ${LT} --full --json $d/link.json --trace $d/out.json \
&& touch $d/out.json && ${EXPECT} 2 'name the same file' $0 --model ${LT} --full --json $d/link.json --trace $d/out.json \
&& ${EXPECT} 2 'name the same file' $0 --model ${LT} --full --json /dev/stdout --trace -; rc=$?; rm -rf $d; exit $rc" ${BIN})
# outputs that cannot be written are refused before the GPU opens (no driver: a GPU open would say so)
add_test(NAME cli_output_paths_before_gpu COMMAND sh -c "d=$(mktemp -d) && mkfifo $d/f && ln -s /nonexistent/dir/x.json $d/dangling \
&& timeout 60 ${EXPECT} 2 'is a FIFO, not a regular file' $0 --model ${LT} --full --json $d/f \
&& ${EXPECT} 2 'over the 255-byte limit' $0 --model ${LT} --full --trace $d/${LONG_DIR} \
&& ${EXPECT} 2 'the symlink points to /nonexistent/dir/x.json' $0 --model ${LT} --full --json $d/dangling \
&& ${EXPECT} 2 'not writable' $0 --model ${LT} --full --json /proc/version; rc=$?; rm -rf $d; exit $rc" ${BIN})
set_tests_properties(cli_same_output_spellings cli_output_paths_before_gpu PROPERTIES LABELS cli TIMEOUT 120
  ENVIRONMENT "LFM2_VALIDATION=require;${NO_DRIVER}")
# --plans runs the checks its flags run: an empty list, spec widths not a multiple of the draft
cli_test(cli_plans_empty cli 2 "--plans needs a value" --model ${LT} --full --plans "")
cli_test(cli_plans_spec_cols cli 2 "multiple of 4" --model ${LT} --full --plans spec --cols 3)
cli_test(cli_plans_batch_spec_cols cli 2 "multiple of 4" --model ${LT} --full --plans batch,spec --cols 3,4)
# messages: a golden file that is missing is named as one
cli_test(cli_golden_missing cli 2 "the golden file is missing" --model ${LT} --full --golden /nonexistent/golden.safetensors)
# the profile's --json and --trace under `ulimit -f 1` (a few hundred bytes): exit 1 naming the
# error, the old files untouched, no temporary left
add_test(NAME cli_outputs_file_size_limit COMMAND sh -c "d=$(mktemp -d) && echo OLD > $d/p.json && echo OLD > $d/t.json \
&& (ulimit -f 1 && ${EXPECT} 1 'write failed: File too large (the file is left as it was)' $0 --model ${LT} --layers 0:2 --cols 2 --pos 4 --reps 1 --json $d/p.json) \
&& (ulimit -f 1 && ${EXPECT} 1 'write failed: File too large' $0 --model ${LT} --layers 0:2 --cols 2 --pos 4 --reps 1 --trace $d/t.json) \
&& grep -qx OLD $d/p.json && grep -qx OLD $d/t.json && ! ls -A $d | grep -q '^[.]'; rc=$?; ls -lA $d; rm -rf $d; exit $rc" ${BIN})
set_tests_properties(cli_outputs_file_size_limit PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# ---- a report a perf engineer acts on (issue 37)
# did you mean: a misspelt flag or built-in name; a file that is not a model says what is expected
cli_test(cli_did_you_mean_flag cli 2 "unknown argument --colums: did you mean --cols?" --model ${LT} --full --colums 4)
cli_test(cli_did_you_mean_model cli 2 "did you mean lfm2-350m?" --model lfm2-350M --full)
cli_test(cli_no_guess_far_flag cli 2 "unknown argument --bogus (see --help)" --model ${LT} --full --bogus)
cli_test(cli_model_text_file cli 2 "not a safetensors file: header length" --model ${CMAKE_SOURCE_DIR}/CMakeLists.txt --full)
cli_test(cli_model_text_file_expected cli 2 "expected a checkpoint folder, .safetensors, .gguf or a built-in name" --model ${CMAKE_SOURCE_DIR}/CMakeLists.txt --full)
cli_test(cli_plans_names_auto cli 2 "expected plan names auto, batch, wide, spec" --model ${LT} --full --plans fast)
# --units: a bad or missing unit is exit 2 naming the flag; ms replaces µs and nothing else; --logits on a
# shard without the head says so on stderr and in the header
cli_test(cli_units_bad cli 2 "--units xs: expected us, ms, s or auto" --model ${LT} --full --units xs)
cli_test(cli_units_missing cli 2 "--units (missing): expected us, ms, s or auto" --model ${LT} --full --units)
cli_test(cli_units_typo cli 2 "did you mean --units?" --model ${LT} --full --unit ms)
add_test(NAME cli_units_ms COMMAND sh -c "out=$($0 --model ${LT} --full --cols 2 --pos 2 --reps 2 --units ms 2>&1) || exit 1; echo \"$out\"; \
  echo \"$out\" | grep -q ' ms/step' && echo \"$out\" | grep -q '^-- summary --' && ! echo \"$out\" | grep -q 'µs/step'" ${BIN})
set_tests_properties(cli_units_ms PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
cli_test(cli_logits_no_head_profile cli-gpu 0 "note: --logits: layers 0:2 end before the model's last layer (6): this shard has no LM head" --model ${LT} --layers 0:2 --cols 2 --pos 2 --reps 1 --logits)
cli_test(cli_csv_html_same cli 2 "--csv x.out and --html x.out name the same file" --model ${LT} --full --csv x.out --html x.out)
cli_test(cli_csv_golden cli 2 "--golden and --csv" --model ${LT} --full --golden ${LT}/golden.safetensors --csv x.csv)
# plan auto: the plan a serving engine runs at that width and weight type (select.h sel_plan_auto)
cli_test(cli_auto_plan_wide cli-gpu 0 "plan auto -> wide (the plan a serving engine runs at 6 cols: wide from 6)" --model ${LT} --full --cols 6 --pos 3 --reps 1)
cli_test(cli_auto_plan_batch cli-gpu 0 "plan auto -> batch (the plan a serving engine runs at 5 cols: wide from 6)" --model ${LT} --full --cols 5 --pos 3 --reps 1)
cli_test(cli_auto_plan_q4_0 cli-gpu 0 "plan auto -> wide (the plan a serving engine runs at 5 cols: wide from 5)" --model ${LT}/model-q4_0.gguf --full --cols 5 --pos 3 --reps 1)
add_test(NAME cli_auto_plan_json COMMAND sh -c "$0 --model ${LT} --layers 0:2 --cols 2 --pos 3 --reps 1 --json - 2>/dev/null | tr -d ' \\t' | grep -q '\"plan_auto\":true'" ${BIN})
set_tests_properties(cli_auto_plan_json PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# --wide below its gemm width says so: in the header and on stderr
cli_test(cli_wide_below_header cli-gpu 0 "plan wide (below 6 cols its matrix products run the batch plan's kernels)" --model ${LT} --full --wide --cols 4 --pos 3 --reps 1)
cli_test(cli_wide_below_note cli-gpu 0 "note: plan wide at 4 cols: below 6 columns" --model ${LT} --full --wide --cols 4 --pos 3 --reps 1)
# a width list: the header once, a progress line per configuration, one row each, the full
# reports only with --verbose; rows whose plans ran the same kernels are marked
add_test(NAME cli_width_list COMMAND sh -c "out=$($0 --model ${LT} --full --cols 1,6 --plans batch,wide --pos 3 --reps 2 2>&1) || exit 1; echo \"$out\"; \
test $(echo \"$out\" | grep -c 'device:') = 1 && echo \"$out\" | grep -q 'profiling 4/4: 6 cols, plan wide' && \
echo \"$out\" | grep -q '^      1  wide .*same kernels as batch' && ! echo \"$out\" | grep -q '^      6  wide .*same kernels' && \
! echo \"$out\" | grep -q -- '-- by kernel --'" ${BIN})
add_test(NAME cli_width_list_verbose COMMAND sh -c "out=$($0 --model ${LT} --full --cols 1,2 --pos 3 --reps 1 --verbose 2>&1) || exit 1; echo \"$out\"; \
test $(echo \"$out\" | grep -c -- '-- by kernel --') = 2 && echo \"$out\" | grep -q '      2  auto -> batch'" ${BIN})
set_tests_properties(cli_width_list cli_width_list_verbose PROPERTIES LABELS cli-gpu TIMEOUT 600 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# --html in headless Chromium (skipped without chromium) and --csv's sections
add_test(NAME cli_html_chromium COMMAND sh ${CMAKE_SOURCE_DIR}/tests/html_check.sh ${BIN} ${FIXTURES})
set_tests_properties(cli_html_chromium PROPERTIES LABELS cli-gpu TIMEOUT 900 SKIP_RETURN_CODE 77 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# golden mode keeps the batch plan by default (docs/design.md), --plans auto included: goldens check
# shapes, not a width
cli_test(cli_golden_default_batch golden 0 "layers 0:6, batch plan" --model ${LT} --full --plans auto --golden ${LT}/golden.safetensors)

# the README's example report still matches the report's format (tools/readme_example.sh: headings
# in order, every line's label; figures and noise-dependent lines aside)
add_test(NAME readme_example COMMAND bash ${CMAKE_SOURCE_DIR}/tools/readme_example.sh ${BIN} --check)
set_tests_properties(readme_example PROPERTIES LABELS cli-gpu TIMEOUT 900 ENVIRONMENT "LFM2_VALIDATION=require;ASAN_OPTIONS=detect_leaks=0")
# a run under a test hook says so in its header (and its JSON: test_hooks)
cli_test_env(cli_test_hooks_recorded cli-gpu 0 "test hooks: LFM2_TEST_SLOW=matmul*=2 (a test run" "LFM2_TEST_SLOW=matmul*=2" --model ${LT} --layers 0:2 --cols 2 --pos 3 --reps 1)
