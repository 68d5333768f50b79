#!/usr/bin/env bash
# Catch-up benchmark: the same backlog copied by the bare Fetch->Produce loop (the ceiling), Cluster Mirror,
# two KafkaConsumer->KafkaProducer copies and MirrorMaker 2, each in its own process between the same two brokers,
# side by side in one run. Prints the figures and the ratios against the ceiling; writes bench/results/catch-up.txt
# and bench/results/catch-up.png (destination progress of every copier over time).
# Usage: bench/catch-up.sh [records] [--two-mirrors] [--warm[=N]] [--warm-starts=N] [--repeat=N] [--copiers=bare,mirror,copy,copy-tuned,mm2]
#                          [--service=key=value ...]
#   records: default 1,000,000 records of 1 KiB, lz4, 8 partitions
#   --two-mirrors: also two mirrors of one service, each mirroring a topic of 4 partitions (the same records)
#   --warm[=N]: the bare loop and the service first copy N other records (default: the backlog once per warm start), then the
#     measured backlog: a copier that has been running (the others start cold)
#   --warm-starts=N: those warm-up records in N copies one after the other, each started anew (default 6: until
#     neither copier's JIT compiler works during the measured copy; README, Catch-up)
#   --repeat=N: the bare loop and the service N times, alternating which goes first; ratios per run, medians judged
#   --copiers: run only these (default all; mm2 needs MirrorMaker 2's classpath, resolved below from Maven Central)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
# MirrorMaker 2 (connect-mirror, same Kafka version) gets its own classpath: Connect's jars stay off the test one
if ! ./mvnw -B -q -f bench/mirrormaker2/pom.xml dependency:build-classpath \
    -Dmdep.outputFile="$PWD/target/mirrormaker2.classpath" >target/mirrormaker2-resolve.log 2>&1; then
  echo "MirrorMaker 2's classpath could not be resolved (see target/mirrormaker2-resolve.log): it is left out"
  rm -f target/mirrormaker2.classpath
fi
. bench/java.sh
bench_java -Xmx2g -Djava.awt.headless=true io.clustermirror.bench.CatchUpBenchmark "$@"
