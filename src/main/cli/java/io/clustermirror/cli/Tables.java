package io.clustermirror.cli;

import io.clustermirror.client.model.InstanceDescription;
import io.clustermirror.client.model.InstanceList;
import io.clustermirror.client.model.MirrorSummary;
import io.clustermirror.client.model.PartitionDescription;
import io.clustermirror.client.model.TopicDescription;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code --list}, {@code --describe} and {@code --instances} print: the KIP's columns, aligned as Kafka's tools align theirs (each
 * column as wide as its widest cell, two spaces apart, the last one not padded).
 */
final class Tables {

    static final List<String> LIST_COLUMNS =
            List.of("MIRROR", "TOPICS", "SOURCE-CLUSTER-ID", "SOURCE-BOOTSTRAP-SERVER");

    static final List<String> DESCRIBE_COLUMNS = List.of(
            "MIRROR", "TOPIC", "PARTITION", "SOURCE-OFFSET", "DESTINATION-OFFSET", "LAG", "STATE", "ETA", "RPO");

    static final List<String> INSTANCES_COLUMNS = List.of("INSTANCE", "URL", "STATE-PARTITIONS", "MIRRORS");

    /** The partition state {@code --failed} keeps. */
    static final String FAILED = "FAILED";

    private Tables() {}

    static List<String> list(List<MirrorSummary> mirrors) {
        List<List<String>> rows = new ArrayList<>();
        for (MirrorSummary m : mirrors) {
            rows.add(List.of(
                    text(m.getName()),
                    text(m.getTopicCount()),
                    text(m.getSourceClusterId()),
                    text(m.getSourceBootstrapServers())));
        }
        return render(LIST_COLUMNS, rows);
    }

    /**
     * One row per instance, in the order the service gives them, the one that answered marked {@code *}; its state
     * partitions as ranges ({@code 0-16,20}).
     */
    static List<String> instances(InstanceList list) {
        List<List<String>> rows = new ArrayList<>();
        for (InstanceDescription i : list.getInstances()) {
            String id = text(i.getId());
            rows.add(List.of(
                    id.equals(list.getAnsweredBy()) ? id + " *" : id,
                    text(i.getUrl()),
                    ranges(i.getStatePartitions()),
                    text(i.getMirrors())));
        }
        return render(INSTANCES_COLUMNS, rows);
    }

    /** Sorted partition numbers as ranges: {@code 0-3,7,9-10}; {@code -} for none. */
    static String ranges(List<Integer> partitions) {
        if (partitions == null || partitions.isEmpty()) {
            return "-";
        }
        List<Integer> sorted = partitions.stream().sorted().toList();
        StringBuilder out = new StringBuilder();
        int from = sorted.get(0);
        int to = from;
        for (int p : sorted.subList(1, sorted.size())) {
            if (p == to + 1) {
                to = p;
                continue;
            }
            out.append(out.isEmpty() ? "" : ",").append(from == to ? from : from + "-" + to);
            from = p;
            to = p;
        }
        out.append(out.isEmpty() ? "" : ",").append(from == to ? from : from + "-" + to);
        return out.toString();
    }

    /**
     * One row per partition, in the order the service gives them; with {@code failed}, only FAILED partitions, and
     * their error in a last column.
     */
    static List<String> describe(List<TopicDescription> topics, boolean failed) {
        List<String> columns = new ArrayList<>(DESCRIBE_COLUMNS);
        if (failed) {
            columns.add("ERROR");
        }
        List<List<String>> rows = new ArrayList<>();
        for (TopicDescription topic : topics) {
            for (PartitionDescription p : topic.getPartitions()) {
                if (failed && !FAILED.equals(p.getState())) {
                    continue;
                }
                List<String> row = new ArrayList<>(List.of(
                        text(topic.getMirror()),
                        text(topic.getTopic()),
                        text(p.getPartition()),
                        offset(p.getSourceOffset()),
                        offset(p.getDestinationOffset()),
                        lag(p),
                        text(p.getState()),
                        eta(p),
                        rpo(p)));
                if (failed) {
                    row.add(oneLine(p.getError()));
                }
                rows.add(row);
            }
        }
        return render(columns, rows);
    }

    /** The ETA column: when the partition will have caught up at its recent rate (the service's estimate), or "-". */
    static String eta(PartitionDescription p) {
        return duration(p.getEtaSeconds() == null ? null : p.getEtaSeconds().longValue());
    }

    /**
     * The RPO column: the age of the oldest source record not on the destination yet (the service's {@code rpoMs}, in
     * whole seconds), {@code <=} before an upper bound (the source could not be read), "-" when unknown or STOPPED.
     */
    static String rpo(PartitionDescription p) {
        if (p.getRpoMs() == null) {
            return "-";
        }
        long ms = p.getRpoMs();
        return Boolean.TRUE.equals(p.getRpoBound()) ? "<=" + duration((ms + 999) / 1000) : duration(ms / 1000);
    }

    /** Seconds as the ETA column shows them: {@code 0s}, {@code 59s}, {@code 1m05s}, {@code 2h03m}; "-" for none. */
    static String duration(Long seconds) {
        if (seconds == null || seconds < 0) {
            return "-";
        }
        long s = seconds;
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format("%dm%02ds", s / 60, s % 60);
        }
        return String.format("%dh%02dm", s / 3600, (s % 3600) / 60);
    }

    /** An offset; the service says -1 when a cluster did not answer: "-". */
    static String offset(Long offset) {
        return offset == null || offset < 0 ? "-" : offset.toString();
    }

    /** The lag, "-" when either offset is unknown (the service's lag is then no difference of offsets). */
    static String lag(PartitionDescription p) {
        if (p.getLag() == null
                || offset(p.getSourceOffset()).equals("-")
                || offset(p.getDestinationOffset()).equals("-")) {
            return "-";
        }
        return p.getLag().toString();
    }

    static List<String> render(List<String> columns, List<List<String>> rows) {
        int[] widths = new int[columns.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = columns.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add(line(columns, widths));
        for (List<String> row : rows) {
            lines.add(line(row, widths));
        }
        return lines;
    }

    private static String line(List<String> cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            if (i == cells.size() - 1) {
                line.append(cells.get(i));
            } else {
                line.append(cells.get(i))
                        .append(" ".repeat(widths[i] - cells.get(i).length() + 2));
            }
        }
        return line.toString().stripTrailing();
    }

    private static String text(Object value) {
        return value == null ? "-" : value.toString();
    }

    /** A cell or message on one line: line breaks become spaces. */
    static String oneLine(String text) {
        return text == null ? "-" : text.replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
