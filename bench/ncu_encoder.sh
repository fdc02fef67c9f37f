#!/bin/bash
# ncu of a compression kernel on one field at rel 1e-3 (first call, 512 MiB tiled): speed of light, occupancy,
# scheduler, instruction mix by pipe and the warp stall reasons. On the GPU machine, repo root, fields in .data/;
# uses build-gpu/hpcz (bench/gpu_check.sh builds it). Output in $OUT (or /tmp/hpcz_out).
# env: KERNEL (regex, default encode_kernel), MODE (fast), FIELD (era5)
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-/tmp/hpcz_out}; mkdir -p "$out"
M=""
for s in barrier long_scoreboard short_scoreboard mio_throttle wait math_pipe_throttle lg_throttle not_selected selected \
         dispatch_stall no_instruction membar sleeping branch_resolving drain tex_throttle imc_miss; do
  M="$M,smsp__average_warp_latency_issue_stalled_$s"
done
M="${M#,},smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fma.sum"
M="$M,smsp__inst_executed_pipe_xu.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
timeout 200 ncu --clock-control none --kernel-name-base function --kernel-name "regex:${KERNEL:-encode_kernel}" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --metrics "$M" \
  build-gpu/hpcz bench --mode ${MODE:-fast} --quick --data .data --fields ${FIELD:-era5} --bounds rel:1e-3 --reps 1 \
  --size-mib 512 > "$out/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -E "Duration|Executed Ipc A|Issue Slots Busy|Eligible Warps|Warp Cycles Per Issued|Achieved Occupancy|Executed Instructions  |DRAM Throughput|stalled|pipe_|wavefronts|bank_conf|Registers Per" \
  "$out/ncu.txt" | sed -E 's/ +/ /g'
