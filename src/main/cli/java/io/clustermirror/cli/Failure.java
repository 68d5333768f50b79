package io.clustermirror.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.client.ApiException;
import io.clustermirror.client.model.PartitionLag;
import io.clustermirror.client.model.Problem;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.List;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/**
 * A failed call as one line for stderr and an exit code. A problem+json answer names its {@code errorCode}, status
 * and detail ({@code Error: UNKNOWN_CLUSTER_MIRROR (404): Cluster mirror 'x' does not exist}); any other HTTP error
 * its status and the start of its body; a call that never got an answer what stood in the way.
 *
 * @param line the message, one line, starting with "Error: "
 * @param exitCode {@link ExitCodes#REFUSED} for an answer, {@link ExitCodes#UNREACHABLE} for none
 */
record Failure(String line, int exitCode) {

    /** How much of a body that is not problem+json goes into the line. */
    private static final int BODY_PREFIX = 200;

    /** Promote's partitions named in the line when it rolled back, before "...". */
    private static final int LAG_SHOWN = 5;

    static Failure of(ApiException e, String url, ObjectMapper json) {
        if (e.getCode() == 0) {
            return new Failure("Error: cannot reach " + url + ": " + cause(e), ExitCodes.UNREACHABLE);
        }
        Problem problem = problem(e.getResponseBody(), json);
        if (problem == null) {
            String body = e.getResponseBody() == null ? "" : Tables.oneLine(e.getResponseBody());
            if (body.length() > BODY_PREFIX) {
                body = body.substring(0, BODY_PREFIX) + "...";
            }
            return new Failure(
                    "Error: HTTP " + e.getCode() + " from " + url + (body.isEmpty() ? " (no body)" : ": " + body),
                    ExitCodes.REFUSED);
        }
        StringBuilder line = new StringBuilder("Error: ")
                .append(problem.getErrorCode())
                .append(" (")
                .append(e.getCode())
                .append("): ")
                .append(Tables.oneLine(problem.getDetail() != null ? problem.getDetail() : problem.getTitle()));
        if (problem.getField() != null
                && (problem.getDetail() == null || !problem.getDetail().contains(problem.getField()))) {
            line.append(" [field ").append(problem.getField()).append(']');
        }
        List<PartitionLag> lag = problem.getLag();
        if (lag != null && !lag.isEmpty()) {
            line.append("; lag ")
                    .append(lag.stream()
                            .limit(LAG_SHOWN)
                            .map(l -> l.getTopic() + "-" + l.getPartition() + " " + l.getLag())
                            .collect(Collectors.joining(", ")))
                    .append(lag.size() > LAG_SHOWN ? ", ..." : "");
        }
        return new Failure(line.toString(), ExitCodes.REFUSED);
    }

    /** The body as a problem with an errorCode, or null when it is none (HTML from a proxy, an empty body). */
    private static Problem problem(String body, ObjectMapper json) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            Problem problem = json.readValue(body, Problem.class);
            return problem.getErrorCode() == null ? null : problem;
        } catch (IOException notAProblem) {
            return null;
        }
    }

    /** What kept the request from an answer, in words; the JDK's ConnectException often has no message. */
    static String cause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof HttpConnectTimeoutException) {
                return "connect timed out";
            }
            if (t instanceof HttpTimeoutException) {
                return "no answer in time (" + t.getMessage() + ")";
            }
            if (t instanceof ConnectException) {
                return "connection refused";
            }
            if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
                return "unknown host";
            }
            if (t instanceof SSLException) {
                return "TLS failed: " + Tables.oneLine(t.getMessage());
            }
            if (t instanceof InterruptedException) {
                return "interrupted";
            }
        }
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName()
                + (root.getMessage() == null ? "" : ": " + Tables.oneLine(root.getMessage()));
    }
}
