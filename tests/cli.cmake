# CLI tests: the binary run as a user runs it, checked on exit code and message (tests/expect.sh).
# Labels: cli (no GPU: runs under ASan with leak checks), cli-gpu (loads lavapipe), golden.
set(BIN $<TARGET_FILE:lfm2-profile-stage>)
set(EXPECT ${CMAKE_SOURCE_DIR}/tests/expect.sh)
set(LT ${FIXTURES}/lfm2-tiny)
set(QT ${FIXTURES}/qwen35-tiny)

function(cli_test name label code text)
  add_test(NAME ${name} COMMAND ${EXPECT} ${code} "${text}" ${BIN} ${ARGN})
  set(env "LFM2_VALIDATION=1")
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
cli_test(cli_wide_not_yet cli 2 "not supported yet" --model ${LT} --full --wide)
cli_test(cli_spec_cols_not_multiple cli 2 "multiple of 4" --model ${LT} --full --spec --cols 6)
cli_test(cli_wide_and_spec cli 2 "--wide and --spec" --model ${LT} --full --wide --spec)
cli_test(cli_current_without_compare cli 2 "--compare" --current x.json)
cli_test(cli_compare_missing_file cli 2 "nope.json" --compare nope.json --current nope.json)

# the fixtures are the project's own copy, byte-identical to ../shared/fixtures (tests/fixtures/README.md)
add_test(NAME fixtures_checksums COMMAND ${CMAKE_SOURCE_DIR}/tests/fixtures_check.sh ${FIXTURES}
         ${CMAKE_SOURCE_DIR}/../shared/fixtures)
set_tests_properties(fixtures_checksums PROPERTIES LABELS loader)

# loading on lavapipe
cli_test(cli_load_tiny cli-gpu 0 "uploaded" --model ${LT} --full --load-only)
cli_test(cli_load_qwen_1_3 cli-gpu 0 "uploaded 28 tensors" --model ${FIXTURES}/qwen35-tiny --layers 1:3 --load-only)
cli_test(cli_load_glm cli-gpu 0 "uploaded" --model ${FIXTURES}/glm-ocr-tiny --full --load-only)
cli_test(cli_load_builtin cli-gpu 0 "uploaded" --model lfm2-350m --layers 0:2 --load-only)
cli_test(cli_load_builtin_q4 cli-gpu 0 "uploaded" --model lfm2-350m --layers 14:16 --dtype q4_0 --load-only)
cli_test(cli_qwen_profile cli-gpu 0 "dn.recurrent" --model ${QT} --full --cols 4 --pos 3 --reps 2 --logits --gap-probe)
cli_test(cli_qwen_profile_prefill_split cli-gpu 0 "attn.gated.prefill" --model ${QT} --layers 2:4 --cols 6 --slots 2 --pos 5 --reps 1)
cli_test(cli_qwen_spec_not_yet cli-gpu 2 "not supported yet" --model ${QT} --full --spec --cols 4 --pos 2 --reps 1)
cli_test(cli_spec_profile cli-gpu 0 "shortconv.snap" --model ${LT} --full --spec --cols 8 --pos 5 --reps 1)
cli_test(cli_spec_profile_slots cli-gpu 0 "plan spec: 2 slots × drafts of 3 tokens" --model ${LT} --layers 1:4 --spec --cols 6 --slots 2 --pos 3 --reps 1)
cli_test(cli_list_devices cli-gpu 0 "llvmpipe" --list-devices)
cli_test(cli_device_out_of_range cli-gpu 2 "--device 7" --model ${LT} --full --load-only --device 7)

# golden checks: golden_tests(PREFIX DIR SPLIT N CHECKS FILE:GOLD ...) runs each model file of DIR
# against its golden, whole and split at layer SPLIT of N (golden_<PREFIX><gold>_full, _0_<SPLIT>,
# _<SPLIT>_<N>), each expecting CHECKS of CHECKS passed; GOLDEN_EXTRA (e.g. --spec) is added to each.
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
# the spec plan (issue 10): a verify of 8 draft tokens, accept 4, decode on from snapshot 4
set(GOLDEN_EXTRA --spec)
golden_tests(spec_ ${LT} 3 6 6 ${FORMATS})
unset(GOLDEN_EXTRA)
cli_test(golden_spec_long_full golden 0 "golden: 4/4 checks passed" --model ${LT} --full --spec --golden ${LT}/golden-long.safetensors)
# a broken snapshot (the spec step writes none) passes the verify and fails every rollback
add_test(NAME golden_spec_broken_snapshot_fails COMMAND ${EXPECT} 4 "golden: 3/6 checks passed" ${BIN} --model ${LT} --full --spec --golden ${LT}/golden.safetensors)
set_tests_properties(golden_spec_broken_snapshot_fails PROPERTIES LABELS golden TIMEOUT 900
  ENVIRONMENT "LFM2_VALIDATION=1;ASAN_OPTIONS=detect_leaks=0;LFM2_TEST_SKIP_SNAPSHOT=1")
# Qwen3.5 (issue 9): BF16 safetensors and the GGUFs (tiled value heads, ssm_a, +1 norms); the long
# goldens whole only (prefill runs of 144 tokens: across two 64-token DeltaNet chunk boundaries)
golden_tests(qwen_ ${QT} 2 4 9 ${FORMATS})
cli_test(golden_qwen_long_full golden 0 "golden: 6/6 checks passed" --model ${QT} --full --golden ${QT}/golden-long.safetensors)
cli_test(golden_qwen_q4_0_long_full golden 0 "golden: 6/6 checks passed" --model ${QT}/model-q4_0.gguf --full --golden ${QT}/golden-q4_0-long.safetensors)
# the check can fail: an unwritten output (poisoned) fails
add_test(NAME golden_unwritten_output_fails COMMAND ${EXPECT} 4 "FAIL" ${BIN} --model ${LT} --full --golden ${LT}/golden.safetensors)
set_tests_properties(golden_unwritten_output_fails PROPERTIES LABELS golden TIMEOUT 900
  ENVIRONMENT "LFM2_VALIDATION=1;ASAN_OPTIONS=detect_leaks=0;LFM2_TEST_DROP_LAST_DISPATCH=1")
cli_test(golden_wrong_model golden 2 "the model has 6 layers" --model ${LT} --full --golden ${FIXTURES}/qwen35-tiny/golden.safetensors)
