#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]: runs each cargo-fuzz target for SECONDS (default 600) from
# the committed seeds (fuzz/seeds/TARGET) into a working corpus (fuzz/corpus/TARGET, not
# committed), and prints libFuzzer's final line per target (executions, coverage, corpus).
# Crashes land in fuzz/artifacts/TARGET/; turn each into a test under tests/.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-600}; shift || true
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(stdio hostlog jsonl recorder pcap http body message skim har client_logs embedded)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "logs"
  cargo +nightly fuzz run -O -a -s none "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 > "logs/$t.log" 2>&1
  rc=$?
  echo "$t: exit $rc; $(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "logs/$t.log" | tail -1)"
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "logs/$t.log" | tr '\n' ' '; echo
  ls "artifacts/$t" 2>/dev/null | sed "s#^#  artifact: artifacts/$t/#"
done
