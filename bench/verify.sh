#!/usr/bin/env bash
# Verification benchmark: a consistency verification of a mirrored backlog against the catch-up of the same backlog,
# both in MB/s of log bytes, side by side in one run. Writes bench/results/verify.txt.
# Usage: bench/verify.sh [partitions] [records]   (default 8 partitions, 500,000 records of 1 KiB, lz4)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx2g io.clustermirror.bench.VerifyBenchmark "$@"
