#!/usr/bin/env bash
# Transaction replay benchmark: source transactions mirrored per second on one partition, markers included.
# Usage: bench/transactions.sh [transactions] [partitions]
#   (default 5,000 transactions of 5 records on each of 1 partition, every fifth aborted)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx1g io.clustermirror.bench.TransactionBenchmark "$@"
