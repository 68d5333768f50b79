# Sourced by the benchmark scripts once the build is done: bench_java runs a benchmark's main class on the test
# classpath. Kafka's clients log through log4j2 at WARN (bench/log4j2.properties): the classpath's Quarkus slf4j binding,
# outside a Quarkus application, would have them format every DEBUG and TRACE message into a buffer never written.
# When the benchmark ends, the partition logs its brokers wrote (several GB a run) are deleted; the brokers' and
# copiers' output and the samples stay in target/bench/<run>.
bench_java() {
  local classpath mark status=0
  classpath="target/test-classes:target/classes:$(tr ':' '\n' <target/kafka-broker.classpath \
    | grep -v slf4j-jboss-logmanager | paste -sd:)"
  mark=$(mktemp)
  java -Dlog4j2.configurationFile=bench/log4j2.properties ${BENCH_OPTS:-} -cp "$classpath" "$@" || status=$?
  if [ -d target/bench ]; then
    find target/bench -mindepth 3 -maxdepth 3 -type d -name logs -newer "$mark" -exec rm -rf {} +
  fi
  rm -f "$mark"
  return "$status"
}
